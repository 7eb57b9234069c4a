import {
  acceptedMatches,
  decodeHeader,
  encodeHeader,
  isStellarNetwork,
  isStellarNetworkId,
  isStellarPayload,
  isSvmPayload,
  MAX_STELLAR_TRANSACTION_BYTES,
  parsePaymentPayload,
  parseRequirements,
  PaymentHeaderError,
  STELLAR_NETWORKS,
  toPaymentRequiredV1,
  v1NetworkName,
  type PaymentRequirements,
} from "../src";

// Stellar's documentation example account id, and a contract id (Circle's pubnet USDC) as a contract payTo.
const ACCOUNT = "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H";
const CONTRACT = "CCW67TSZV3SSS2HXMBQ5JFGCKJNXKZM7UQUWUZPUTHXSTZLEO7SJMI75";

const requirement: PaymentRequirements = {
  scheme: "exact",
  network: "stellar:testnet",
  asset: STELLAR_NETWORKS["stellar:testnet"].usdc,
  amount: "1105000",
  payTo: ACCOUNT,
  maxTimeoutSeconds: 60,
  extra: { areFeesSponsored: true },
};

/** Some bytes as the payload's transaction: the wire checks the encoding and the size, never the XDR. */
const someTransaction = (bytes = 1200) => Buffer.alloc(bytes, 7).toString("base64");

describe("Stellar on the x402 wire", () => {
  it("names the official networks with Circle's USDC contracts and the network passphrases, and no v1 names", () => {
    expect(Object.keys(STELLAR_NETWORKS)).toEqual(["stellar:pubnet", "stellar:testnet"]);
    expect(STELLAR_NETWORKS["stellar:testnet"]).toEqual({
      usdc: "CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA",
      // The contract is the asset contract of USDC:<issuer> (packages/stellar-chain checks the two agree).
      usdcIssuer: "GBBD47IF6LWK7P7MDEVSCWR7DPUWV3NY3DTQEVFL4NAT4AQH3ZLLFLA5",
      testnet: true,
      networkPassphrase: "Test SDF Network ; September 2015",
    });
    expect(STELLAR_NETWORKS["stellar:pubnet"].usdc).toBe(CONTRACT);
    expect(isStellarNetwork("stellar:testnet")).toBe(true);
    expect(isStellarNetwork("stellar:futurenet")).toBe(false);
    expect(isStellarNetworkId("stellar:futurenet")).toBe(true);
    expect(isStellarNetworkId("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1")).toBe(false);
    // x402 v1 has no Stellar: a v1 answer leaves Stellar requirements out.
    expect(v1NetworkName("stellar:testnet")).toBeUndefined();
    expect(toPaymentRequiredV1({ x402Version: 2, resource: { url: "https://x.test/r" }, accepts: [requirement] }).accepts).toEqual([]);
  });

  it("parses a Stellar payload as { transaction }, told apart from Solana's by its network", () => {
    const payment = { x402Version: 2, accepted: requirement, payload: { transaction: someTransaction() } };
    const parsed = parsePaymentPayload(decodeHeader(encodeHeader(payment)));
    expect(parsed).toEqual(payment);
    expect(isStellarPayload(parsed)).toBe(true);
    expect(isSvmPayload(parsed)).toBe(false);
    const solana = {
      ...payment,
      accepted: {
        ...requirement,
        network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
        asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
        payTo: "11111111111111111111111111111112",
      },
    };
    const parsedSolana = parsePaymentPayload(solana);
    expect(isSvmPayload(parsedSolana)).toBe(true);
    expect(isStellarPayload(parsedSolana)).toBe(false);
  });

  it("refuses a Stellar payload that is not bounded standard base64, or carries an authorization instead", () => {
    const withTransaction = (transaction: unknown) => ({ x402Version: 2, accepted: requirement, payload: { transaction } });
    expect(() => parsePaymentPayload(withTransaction(someTransaction(MAX_STELLAR_TRANSACTION_BYTES)))).not.toThrow();
    for (const bad of [
      someTransaction(MAX_STELLAR_TRANSACTION_BYTES + 3),
      "",
      12,
      someTransaction().replace(/=+$/, "").slice(0, -1),
      Buffer.alloc(60, 250).toString("base64url"),
      `${someTransaction()} `,
    ]) {
      expect(() => parsePaymentPayload(withTransaction(bad))).toThrow(PaymentHeaderError);
    }
    const evmShaped = { x402Version: 2, accepted: requirement, payload: { signature: `0x${"1".repeat(130)}`, authorization: {} } };
    expect(() => parsePaymentPayload(evmShaped)).toThrow(/payload.transaction/);
  });

  it("takes a contract id as the asset and an account or contract id as payTo, strkey checksums included", () => {
    expect(parseRequirements({ ...requirement })).toEqual(requirement);
    expect(parseRequirements({ ...requirement, payTo: CONTRACT }).payTo).toBe(CONTRACT);
    const mistyped = `${ACCOUNT.slice(0, 10)}${ACCOUNT[10] === "A" ? "B" : "A"}${ACCOUNT.slice(11)}`;
    for (const [patch, field] of [
      [{ asset: ACCOUNT }, /asset must be a Soroban token contract id/],
      [{ asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" }, /asset/],
      [{ payTo: mistyped }, /payTo must be a Stellar account id/],
      [{ payTo: ACCOUNT.toLowerCase() }, /payTo/],
      [{ payTo: `M${"A".repeat(68)}` }, /payTo/],
      [{ payTo: "0x1111111111111111111111111111111111111111" }, /payTo/],
    ] as const) {
      expect(() => parseRequirements({ ...requirement, ...patch }, "requirement")).toThrow(field);
    }
  });

  it("matches addresses exactly: a strkey has one spelling", () => {
    expect(acceptedMatches({ ...requirement }, requirement)).toBe(true);
    expect(acceptedMatches({ ...requirement, payTo: ACCOUNT.toLowerCase() }, requirement)).toBe(false);
    expect(acceptedMatches({ ...requirement, asset: requirement.asset.toLowerCase() }, requirement)).toBe(false);
    expect(acceptedMatches({ ...requirement, extra: {} }, requirement)).toBe(false);
  });
});
