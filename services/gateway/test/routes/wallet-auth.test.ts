import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { identityV1 } from "@c402/contracts";
import { ACCOUNT_ID, PAY_TO, servers, bodyOf, recorded } from "../support/fake-gateway";

/** /auth/wallet/challenge and /auth/wallet/verify (routes/wallet-auth.ts). */

const serve = servers();
const post = (url: string, body: unknown) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const EXPIRES = timestampFromDate(new Date("2025-03-01T00:05:00.000Z"));

function walletFakes(firstSignIn: boolean) {
  return recorded({
    identity: {
      createWalletChallenge: async () =>
        create(identityV1.CreateWalletChallengeResponseSchema, {
          message: "Sign in to c402",
          nonce: "n0nce",
          expiresAt: EXPIRES,
          expiresInSeconds: 300,
        }),
      verifyWalletSignature: async () =>
        create(identityV1.VerifyWalletSignatureResponseSchema, {
          account: { id: ACCOUNT_ID },
          accountCreated: firstSignIn,
          // Every sign-in: a fresh key, shown once, and a session beside it.
          apiKey: { id: "key_First0000000000000000000", prefix: "sk_test_abcd", scope: identityV1.Scope.FULL, mode: identityV1.KeyMode.TEST },
          secret: "sk_test_secret",
          session: { token: "sess_token", expiresAt: EXPIRES },
          payoutWallet: { chainFamily: "evm", address: PAY_TO, verified: true, isDefault: true },
        }),
    },
  });
}

describe("wallet sign-in", () => {
  it("answers the challenge to sign", async () => {
    const { fakes, of } = walletFakes(true);
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/auth/wallet/challenge`, { address: PAY_TO, network: "eip155:8453" });
    expect(await bodyOf(res)).toEqual({ message: "Sign in to c402", nonce: "n0nce", expires_at: "2025-03-01T00:05:00.000Z", expires_in_seconds: 300 });
    expect(of("createWalletChallenge")).toEqual([{ address: PAY_TO, network: "eip155:8453" }]);
  });

  it("creates the account and shows its first key once (201); a later sign-in shows a fresh key (200); a session beside both", async () => {
    const first = walletFakes(true);
    const created = await post(`${(await serve.app(first.fakes)).url}/auth/wallet/verify`, { message: "m", signature: "0xsig" });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    expect(await bodyOf(created)).toMatchObject({
      account: { id: ACCOUNT_ID, created: true },
      api_key: { id: "key_First0000000000000000000", scope: "full", mode: "test", secret: "sk_test_secret" },
      session: { token: "sess_token", expires_at: "2025-03-01T00:05:00.000Z" },
      payout_wallet: { chain: "evm", address: PAY_TO, verified: true, default: true },
    });
    expect(first.of("verifyWalletSignature")).toEqual([{ message: "m", signature: "0xsig" }]);

    const later = walletFakes(false);
    const again = await post(`${(await serve.app(later.fakes)).url}/auth/wallet/verify`, { message: "m", signature: "0xsig" });
    expect(again.status).toBe(200);
    expect(again.headers.get("cache-control")).toBe("no-store");
    expect(await bodyOf(again)).toMatchObject({
      account: { id: ACCOUNT_ID, created: false },
      api_key: { secret: "sk_test_secret" },
      session: { token: "sess_token", expires_at: "2025-03-01T00:05:00.000Z" },
    });
  });

  it("refuses a challenge for a missing network with 422", async () => {
    const { fakes, of } = walletFakes(true);
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/auth/wallet/challenge`, { address: PAY_TO });
    expect(res.status).toBe(422);
    expect((await bodyOf(res)).errors).toEqual([{ field: "network", reason: "is required" }]);
    expect(of("createWalletChallenge")).toHaveLength(0);
  });
});
