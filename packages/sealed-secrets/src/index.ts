/**
 * @c402/sealed-secrets: envelope encryption of stored credentials (sellers' origin API keys;
 * later webhook secrets and wallet keys), and tags of tokens checked without storing them
 * (passes). See README.md for the sealed format, key rotation and
 * which AAD to pass.
 */
export { KeyringError, SealedSecretError, type SealedSecretFailure } from "./errors";
export { generateKeyringText, Keyring, parseKeyring, type KeyringEntry } from "./keyring";
export { TokenTagger } from "./mac";
export { SecretSealer } from "./sealer";
