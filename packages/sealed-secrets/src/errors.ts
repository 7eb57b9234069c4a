/**
 * The two error types of the package. Neither message ever carries key material, plaintext or
 * the sealed value: a keyring error names at most an entry's position, a (valid) key id or a
 * byte count; a sealed-secret error names only the kind of failure.
 */

/** A keyring configuration that cannot be used (format, id, key length, duplicate id). */
export class KeyringError extends Error {
  override readonly name = "KeyringError";
}

/** Why a sealed value could not be opened (or sealed). Carries no data from the value. */
export type SealedSecretFailure =
  /** Not a well-formed `v1.` sealed string (segments, encoding, lengths). */
  | "malformed"
  /** Sealed under a key id the keyring does not hold (retired too early, or another environment's). */
  | "unknown-key"
  /** Authentication failed: tampered, wrong AAD, or the key under that id is not the one that sealed it. */
  | "unauthentic"
  /** An unusable plaintext or AAD argument (not a string, empty AAD, lone surrogates). */
  | "invalid-input";

const MESSAGES: Record<SealedSecretFailure, string> = {
  malformed: "sealed-secrets: cannot open: not a well-formed sealed value",
  "unknown-key": "sealed-secrets: cannot open: sealed under a key id that is not in the keyring",
  unauthentic: "sealed-secrets: cannot open: authentication failed (tampered, wrong aad, or wrong key)",
  "invalid-input": "sealed-secrets: plaintext must be a well-formed string and aad a non-empty well-formed string",
};

/** Every failure of seal/open/rewrap/keyIdOf. The message is fixed per `reason`. */
export class SealedSecretError extends Error {
  override readonly name = "SealedSecretError";
  readonly reason: SealedSecretFailure;

  constructor(reason: SealedSecretFailure) {
    super(MESSAGES[reason]);
    this.reason = reason;
  }
}
