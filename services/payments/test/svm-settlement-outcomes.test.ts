import http from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "@c402/db";
import { newId } from "@c402/ids";
import type { SolanaDevnet } from "@c402/solana-devnet";
import { describeWith } from "@c402/testkit";
import type { AnyPaymentPayload, PaymentRequirements } from "@c402/x402";
import { createSolanaRpc, generateKeyPairSigner, type Address } from "@solana/kit";
import { toClientSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { requirementsFor, type CheckoutForPayment } from "../src/domain/requirements";
import { openSvmRig, openSvmSaga, type SvmRig } from "./support/svm-saga";

/** What the node between the saga and the devnet does to the saga's calls (each test sets it). */
interface NodeBehaviour {
  /** Runs before a sendTransaction is passed on; answers the params to pass on instead. */
  onSend?: (params: unknown[]) => Promise<unknown[]>;
  /** Answers getSignatureStatuses with nothing known, as a node that has not seen the transaction yet. */
  hideStatuses?: boolean;
}

/**
 * G8 and G11 on the Solana rail: what the chain answers after the buyer's
 * transaction was sent decides the sale, never the send alone. The saga talks
 * to the real devnet through a JSON-RPC relay on loopback that a test can
 * make slow to confirm, or use to move the buyer's USDC away just before the
 * transaction reaches the chain.
 */
describeWith("postgres")("Solana settlement outcomes: landed and failed, refused at the node, not confirmed in time (PostgreSQL, Solana devnet)", () => {
  let rig: SvmRig;
  let devnet: SolanaDevnet;
  let node: http.Server;
  let behaviour: NodeBehaviour = {};
  let saga: Awaited<ReturnType<typeof openSvmSaga>>;
  let seller: string;
  const PRICE = 200_000n;

  beforeAll(async () => {
    rig = await openSvmRig("svm-outcomes");
    devnet = rig.devnet;
    node = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      req.on("end", () => {
        void relayCall(JSON.parse(body) as { id: number; method: string; params: unknown[] }).then((answer) => {
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify(answer));
        });
      });
    });
    await new Promise<void>((resolve) => node.listen(0, "127.0.0.1", resolve));
    const nodeUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;
    saga = await openSvmSaga({ ...rig.config, rpcUrl: nodeUrl, settleTimeoutMs: 2_000 });
    seller = (await generateKeyPairSigner()).address;
    await devnet.setTokenBalance(seller as Address, 0n);
  }, 60_000);

  afterAll(async () => {
    await saga?.close();
    node?.closeAllConnections();
    await new Promise((resolve) => node?.close(resolve));
    await rig?.close();
  });

  beforeEach(() => {
    behaviour = {};
  });

  async function relayCall(call: { id: number; method: string; params: unknown[] }): Promise<unknown> {
    if (call.method === "getSignatureStatuses" && behaviour.hideStatuses) {
      return { jsonrpc: "2.0", id: call.id, result: { context: { slot: Number(devnet.slot()) }, value: (call.params[0] as unknown[]).map(() => null) } };
    }
    const params = call.method === "sendTransaction" && behaviour.onSend ? await behaviour.onSend(call.params) : call.params;
    const res = await fetch(devnet.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...call, params }) });
    return res.json();
  }

  function checkout(): CheckoutForPayment {
    return {
      id: newId("checkout"),
      accountId: "acc_outcomes",
      title: "Solana goods",
      priceAtomic: PRICE,
      payTo: "0x3333333333333333333333333333333333333333",
      armed: true,
      reusable: true,
      status: "open",
      payoutAddresses: { solana: seller },
    };
  }

  async function signedPayment(c: CheckoutForPayment): Promise<{ buyer: Address; requirement: PaymentRequirements; payload: AnyPaymentPayload }> {
    const buyer = await generateKeyPairSigner();
    await devnet.setTokenBalance(buyer.address, 1_000_000n);
    const requirement = requirementsFor("live", c, saga.saga.rails()).find((r) => r.network === devnet.network) as PaymentRequirements;
    const client = new ExactSvmScheme(toClientSvmSigner(buyer), { rpcUrl: devnet.url });
    const created = await client.createPaymentPayload(2, requirement as Parameters<ExactSvmScheme["createPaymentPayload"]>[1]);
    return {
      buyer: buyer.address,
      requirement,
      payload: { x402Version: 2, accepted: requirement, payload: { transaction: String(created.payload.transaction) } },
    };
  }

  async function rowOf(checkoutId: string) {
    const { rows } = await sql<{ id: string; status: string; tx_hash: string | null; failure_reason: string | null }>`
      select id, status, tx_hash, failure_reason from payments where checkout_id = ${checkoutId}`.execute(rig.database.db);
    return rows;
  }

  async function eventsOf(paymentId: string): Promise<number> {
    const { rows } = await sql<{ n: string }>`select count(*) as n from outbox where key = ${paymentId}`.execute(rig.database.db);
    return Number(rows[0]?.n ?? 0);
  }

  /** The buyer's USDC moved away just before the transaction reaches the chain. */
  const drain = (buyer: Address) => () => devnet.setTokenBalance(buyer, 0n);

  it("lands and fails (the buyer's USDC moved away; sent without preflight): no sale, 402 with the failed settlement and its signature, no receipt, no event", async () => {
    const c = checkout();
    const p = await signedPayment(c);
    behaviour.onSend = async (params) => {
      await drain(p.buyer)();
      const [wire, config] = params as [string, Record<string, unknown>];
      return [wire, { ...config, skipPreflight: true }];
    };
    const refused = await saga.saga.submit(c, p.payload, p.requirement).catch((err: unknown) => err);
    expect(refused).toMatchObject({ extensions: { reason: "settlement_failed", settlement: { network: devnet.network } } });
    const [row] = await rowOf(c.id);
    expect(row).toMatchObject({ status: "failed", failure_reason: "settlement_failed" });
    expect((refused as { extensions: { settlement: { transaction: string } } }).extensions.settlement.transaction).toBe(row?.tx_hash);
    // The chain has it, failed: its fee was paid, no USDC moved.
    const rpc = createSolanaRpc(devnet.url);
    const { value } = await rpc.getSignatureStatuses([row!.tx_hash as never]).send();
    expect(value[0]?.err).not.toBeNull();
    expect(await devnet.tokenBalance(seller as Address)).toBe(0n);
    expect(await eventsOf(row!.id)).toBe(0);
    // Presented again, the same failure, never a second attempt.
    behaviour = {};
    await expect(saga.saga.submit(c, p.payload, p.requirement)).rejects.toMatchObject({ extensions: { reason: "settlement_failed" } });
    expect(await rowOf(c.id)).toHaveLength(1);
  });

  it("refused by the node's preflight (the buyer's USDC moved away): failed before landing, nothing charged, nothing on chain", async () => {
    const c = checkout();
    const p = await signedPayment(c);
    behaviour.onSend = async (params) => {
      await drain(p.buyer)();
      return params;
    };
    const refused = await saga.saga.submit(c, p.payload, p.requirement).catch((err: unknown) => err);
    expect(refused).toMatchObject({ status: 402, extensions: { reason: "invalid_exact_svm_transaction_simulation_failed" } });
    const [row] = await rowOf(c.id);
    expect(row).toMatchObject({ status: "failed", failure_reason: "invalid_exact_svm_transaction_simulation_failed" });
    const { value } = await createSolanaRpc(devnet.url)
      .getSignatureStatuses([row!.tx_hash as never], { searchTransactionHistory: true })
      .send();
    expect(value[0]).toBeNull();
    expect(await eventsOf(row!.id)).toBe(0);
  });

  it("not confirmed within the wait: pending (the buyer is never asked to pay again), then the sweep settles it once", async () => {
    const c = checkout();
    const p = await signedPayment(c);
    const sellerBefore = await devnet.tokenBalance(seller as Address);
    behaviour.hideStatuses = true;
    const first = await saga.saga.submit(c, p.payload, p.requirement);
    expect(first.kind).toBe("pending");
    // It landed: the seller has the money, the ledger does not say so yet.
    expect(await devnet.tokenBalance(seller as Address)).toBe(sellerBefore + PRICE);
    const again = await saga.saga.submit(c, p.payload, p.requirement);
    expect(again).toMatchObject({ kind: "pending", row: { id: first.row.id } });

    behaviour = {};
    await saga.saga.sweep(0);
    const [row] = await rowOf(c.id);
    expect(row).toMatchObject({ status: "settled", tx_hash: first.row.tx_hash });
    expect(await eventsOf(row!.id)).toBe(1);
    expect(await devnet.tokenBalance(p.buyer)).toBe(1_000_000n - PRICE);
    expect(await devnet.tokenBalance(seller as Address)).toBe(sellerBefore + PRICE);
    expect(await saga.saga.submit(c, p.payload, p.requirement)).toMatchObject({ kind: "settled", redelivered: true, row: { id: row!.id } });
  });
});
