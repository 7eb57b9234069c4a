import { newId } from "@c402/ids";
import { ProblemError, invalid } from "@c402/problems";
import { verifyMessage } from "viem";
import { identityStore as store, type ApiKeyRow, type IdentityDb, type PayoutWalletRow } from "../store/identity-store";
import { hashApiKey, isWellFormedApiKey, mintApiKey, type KeyMode, type Scope } from "./api-keys";
import { challengeMessage, challengeRejected, newChallengeNonce, nonceOf, validateChallenge, validateVerify, type ChallengeInput } from "./wallet-challenge";

export interface IdentitySettings {
  baseUrl: string;
  challengeTtlSeconds: number;
}

export interface SignInResult {
  accountId: string;
  accountCreatedAt: Date;
  accountCreated: boolean;
  key: ApiKeyRow;
  secret: string;
  wallet: PayoutWalletRow;
}

/** Identity rules: wallet sign-in, API key lifecycle and credential resolution. */
export class Identity {
  constructor(
    private readonly db: IdentityDb,
    private readonly settings: IdentitySettings,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async createChallenge(input: ChallengeInput) {
    const { address, network } = validateChallenge(input);
    const issuedAt = this.now();
    const expiresAt = new Date(issuedAt.getTime() + this.settings.challengeTtlSeconds * 1000);
    const nonce = newChallengeNonce();
    const message = challengeMessage({ baseUrl: this.settings.baseUrl, address, chainId: network.chainId, nonce, issuedAt, expiresAt });
    await store.insertChallenge(this.db, { nonce, address, network: input.network, message, expires_at: expiresAt });
    return { message, nonce, expiresAt };
  }

  /**
   * Consumes a signed challenge. First sign-in creates the account with the
   * wallet as its verified default payout wallet; every sign-in mints a fresh
   * test-mode key with scope `full` (key recovery for wallet-only accounts).
   */
  async verifySignature(input: { message: string; signature: string }): Promise<SignInResult> {
    validateVerify(input);
    const nonce = nonceOf(input.message);
    if (!nonce) throw challengeRejected();
    return this.db.transaction().execute(async (trx) => {
      const challenge = await store.claimChallenge(trx, nonce, this.now());
      if (!challenge || challenge.message !== input.message) throw challengeRejected();
      const valid = await verifyMessage({
        address: challenge.address as `0x${string}`,
        message: challenge.message,
        signature: input.signature as `0x${string}`,
      }).catch(() => false);
      if (!valid) throw challengeRejected();

      const existing = await store.findSignerWallet(trx, "eip155", challenge.address);
      let wallet: PayoutWalletRow;
      let accountCreated = false;
      let accountCreatedAt: Date;
      if (existing) {
        wallet = existing;
        const account = await store.findAccount(trx, wallet.account_id);
        accountCreatedAt = account?.created_at ?? this.now();
      } else {
        accountCreated = true;
        accountCreatedAt = this.now();
        const accountId = newId("account");
        await store.insertAccount(trx, { id: accountId, created_at: accountCreatedAt });
        wallet = { account_id: accountId, chain_family: "eip155", address: challenge.address, verified: true, is_default: true };
        await store.insertPayoutWallet(trx, wallet);
      }
      const minted = mintApiKey("test");
      const key = await store.insertApiKey(trx, {
        id: newId("apiKey"),
        account_id: wallet.account_id,
        name: "wallet sign-in",
        prefix: minted.prefix,
        secret_hash: minted.hash,
        scope: "full",
        mode: "test",
      });
      return { accountId: wallet.account_id, accountCreatedAt, accountCreated, key, secret: minted.secret, wallet };
    });
  }

  async resolve(secret: string): Promise<ApiKeyRow> {
    const rejected = new ProblemError("unauthenticated", "The API key is missing, malformed, unknown or revoked.");
    if (!isWellFormedApiKey(secret)) throw rejected;
    const key = await store.findApiKeyByHash(this.db, hashApiKey(secret));
    if (!key || key.revoked_at) throw rejected;
    await store.touchApiKey(this.db, key.id, this.now());
    return key;
  }

  async createKey(accountId: string, input: { name?: string; scope: Scope; mode: KeyMode }) {
    if (input.name !== undefined && input.name.length > 120) throw invalid([{ field: "name", reason: "must be at most 120 characters" }]);
    if (!(await store.findAccount(this.db, accountId))) throw new ProblemError("not-found", "No such account.");
    const minted = mintApiKey(input.mode);
    const key = await store.insertApiKey(this.db, {
      id: newId("apiKey"),
      account_id: accountId,
      name: input.name ?? null,
      prefix: minted.prefix,
      secret_hash: minted.hash,
      scope: input.scope,
      mode: input.mode,
    });
    return { key, secret: minted.secret };
  }

  listKeys(accountId: string) {
    return store.listApiKeys(this.db, accountId);
  }

  async revokeKey(accountId: string, keyId: string) {
    const key = await store.revokeApiKey(this.db, accountId, keyId, this.now());
    if (!key) throw new ProblemError("not-found", "No such key on this account.");
    return key;
  }

  payoutWallets(accountId: string) {
    return store.listPayoutWallets(this.db, accountId);
  }
}
