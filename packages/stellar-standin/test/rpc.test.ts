import { request } from "node:https";
import { Keypair, rpc, xdr } from "@stellar/stellar-sdk";
import { startStellarStandin, trustCertificateInThisProcess, type StellarStandin } from "../src";

/** Raw JSON-RPC over HTTPS on a connection of its own (not the global agent), trusting the stand-in's authority or only the usual roots. */
function rawCall(standin: StellarStandin, body: unknown, trust: "standin" | "roots" = "standin"): Promise<{ status: number; json: Record<string, unknown> }> {
  const url = new URL(standin.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: "POST",
        agent: false,
        ca: trust === "standin" ? standin.caCertificatePem : undefined,
        headers: { "content-type": "application/json" },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown> }));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

describe("the stand-in over Soroban JSON-RPC", () => {
  let standin: StellarStandin;
  let server: rpc.Server;
  let untrust: () => void;

  beforeAll(async () => {
    standin = await startStellarStandin({ ledgerMs: 0 });
    untrust = trustCertificateInThisProcess(standin.caCertificatePem);
    server = new rpc.Server(standin.url);
  });

  afterAll(async () => {
    untrust();
    await standin.close();
  });

  it("serves HTTPS on 127.0.0.1 only, with a certificate a client must be told to trust", async () => {
    expect(standin.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    await expect(rawCall(standin, { jsonrpc: "2.0", id: 1, method: "getHealth" }, "roots")).rejects.toThrow(/self-signed|unable to verify|certificate/);
    await expect(startStellarStandin({ host: "0.0.0.0" })).rejects.toThrow(/loopback only/);
    // Without allowHttp, stellar-sdk takes https URLs only: the reason the stand-in is not plain http.
    expect(() => new rpc.Server(standin.url.replace("https:", "http:"))).toThrow(/insecure/);
  });

  it("presents itself as Stellar testnet, with USDC's real asset contract", async () => {
    expect(standin.network).toBe("stellar:testnet");
    expect(standin.usdc).toBe("CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA");
    expect(await server.getNetwork()).toEqual({ passphrase: "Test SDF Network ; September 2015", protocolVersion: 23 });
    expect(await server.getHealth()).toMatchObject({ status: "healthy", latestLedger: standin.latestLedger(), ledgerRetentionWindow: 17_280 });
    const pubnet = await startStellarStandin({ network: "stellar:pubnet", ledgerMs: 0 });
    try {
      expect(pubnet.usdc).toBe("CCW67TSZV3SSS2HXMBQ5JFGCKJNXKZM7UQUWUZPUTHXSTZLEO7SJMI75");
      expect(pubnet.networkPassphrase).toBe("Public Global Stellar Network ; September 2015");
    } finally {
      await pubnet.close();
    }
  });

  it("closes ledgers chained by hash, with a header and close meta stellar-sdk 15 parses", async () => {
    const before = await server.getLatestLedger();
    standin.closeLedger();
    const after = await server.getLatestLedger();
    expect(after.sequence).toBe(before.sequence + 1);
    expect(after.headerXdr.ledgerSeq()).toBe(after.sequence);
    expect(after.headerXdr.previousLedgerHash().toString("hex")).toBe(before.id);
    expect(after.metadataXdr.v2().ledgerHeader().hash().toString("hex")).toBe(after.id);
    expect(Number(after.closeTime)).toBeGreaterThanOrEqual(Number(before.closeTime));
  });

  it("closes ledgers on its own timer", async () => {
    const ticking = await startStellarStandin({ ledgerMs: 50 });
    try {
      const first = ticking.latestLedger();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(ticking.latestLedger()).toBeGreaterThan(first + 2);
    } finally {
      await ticking.close();
    }
  });

  it("reads accounts through getLedgerEntries (rpc.Server.getAccount) and answers no entry for an unknown one", async () => {
    const account = Keypair.random();
    await expect(server.getAccount(account.publicKey())).rejects.toThrow(/Account not found/);
    standin.fundAccount(account.publicKey(), 25_000_000n);
    const found = await server.getAccount(account.publicKey());
    expect(found.sequenceNumber()).toBe(String(BigInt(standin.latestLedger()) << 32n));
    const entry = await server.getAccountEntry(account.publicKey());
    expect(entry.balance().toBigInt()).toBe(25_000_000n);
  });

  it("answers NOT_FOUND for a transaction it never saw, and refuses a malformed hash or envelope as stellar-rpc does", async () => {
    const unknown = "ab".repeat(32);
    expect(await server.getTransaction(unknown)).toMatchObject({ status: "NOT_FOUND", txHash: unknown, latestLedger: standin.latestLedger() });
    expect((await rawCall(standin, { jsonrpc: "2.0", id: 1, method: "getTransaction", params: { hash: "abc" } })).json).toMatchObject({
      error: { code: -32602, message: "unexpected hash length (3)" },
    });
    expect((await rawCall(standin, { jsonrpc: "2.0", id: 2, method: "sendTransaction", params: { transaction: "bm90IHhkcg==" } })).json).toMatchObject({
      error: { code: -32602, message: "invalid_xdr" },
    });
    expect((await rawCall(standin, { jsonrpc: "2.0", id: 3, method: "simulateTransaction", params: { transaction: "bm90IHhkcg==" } })).json).toMatchObject({
      result: { error: "Could not unmarshal transaction" },
    });
    expect((await rawCall(standin, { jsonrpc: "2.0", id: 4, method: "getLatestLedger", params: ["positional"] })).json).toMatchObject({
      error: { code: -32602 },
    });
    expect((await rawCall(standin, { jsonrpc: "2.0", id: 5, method: "getEvents", params: {} })).json).toMatchObject({ error: { code: -32601 } });
    const keys = [xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId: Keypair.random().xdrAccountId() })).toXDR("base64")];
    expect((await rawCall(standin, { jsonrpc: "2.0", id: 6, method: "getLedgerEntries", params: { keys, xdrFormat: "json" } })).json).toMatchObject({
      error: { code: -32602 },
    });
  });

  it("funds, mints, closes ledgers and arms a failure through standin_* cheats, for callers in another process", async () => {
    const holder = Keypair.random().publicKey();
    const call = (method: string, params: Record<string, unknown>) => rawCall(standin, { jsonrpc: "2.0", id: 1, method, params });
    expect((await call("standin_mintUsdc", { address: holder, amount: 5 })).json).toMatchObject({
      error: { code: -32602, message: expect.stringMatching(/fund it first/) },
    });
    expect((await call("standin_fundAccount", { accountId: holder, stroops: "10000000" })).json).toMatchObject({
      result: { latestLedger: standin.latestLedger() },
    });
    expect((await call("standin_mintUsdc", { address: holder, amount: "12345678" })).json).toHaveProperty("result");
    expect(standin.usdcBalance(holder)).toBe(12_345_678n);
    expect((await call("standin_mintUsdc", { address: holder, amount: -1 })).json).toMatchObject({ error: { code: -32602 } });
    const ledger = standin.latestLedger();
    expect((await call("standin_closeLedger", {})).json).toMatchObject({ result: { latestLedger: ledger + 1 } });
    // Armed for an account that never sends (what the failure does is a test of test/strictness.test.ts).
    expect((await call("standin_failNextTransaction", { source: holder })).json).toMatchObject({ result: { latestLedger: ledger + 1 } });
    expect((await call("standin_failNextTransaction", { source: "GNOTANACCOUNT" })).json).toMatchObject({
      error: { code: -32602, message: expect.stringMatching(/not an account id/) },
    });
    expect((await call("standin_failNextTransaction", { source: 7 })).json).toMatchObject({ error: { code: -32602 } });
  });

  it("answers balances and the transfers made through standin_usdcBalance and standin_transfers", async () => {
    const holder = Keypair.random().publicKey();
    const call = (method: string, params: Record<string, unknown>) => rawCall(standin, { jsonrpc: "2.0", id: 1, method, params });
    standin.fundAccount(holder);
    standin.mintUsdc(holder, 42n);
    expect((await call("standin_usdcBalance", { address: holder })).json).toMatchObject({ result: { balance: "42" } });
    expect((await call("standin_usdcBalance", { address: Keypair.random().publicKey() })).json).toMatchObject({ result: { balance: "0" } });
    expect((await call("standin_usdcBalance", {})).json).toMatchObject({ error: { code: -32602 } });
    const answer = (await call("standin_transfers", {})).json as { result: { transfers: unknown[] } };
    expect(answer.result.transfers).toEqual(standin.transfers().map((t) => ({ ...t, amount: t.amount.toString() })));
  });
});
