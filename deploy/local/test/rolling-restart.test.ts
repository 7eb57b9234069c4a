import { request } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TestUSDC } from "@c402/evm-contracts";
import { describeWith, INFRA_ENV } from "@c402/testkit";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { startWebhookReceiver, type WebhookReceiver } from "@c402/testkit/webhook-receiver";
import { decodeHeader, encodeHeader, signExactEvmPayment, type PaymentRequired, type PaymentRequirements } from "@c402/x402";
import pg from "pg";
import { createPublicClient, createWalletClient, http, type Hex } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { json, signIn } from "../../embedded/test/seller";
import { startLocalCluster, type ClusterProcess, type LocalCluster, type ProcessExit } from "../src/cluster";
import { freePort } from "../src/ports";
import { dropDatabase } from "../src/provision";

/**
 * G36 for the distributed processes: two replicas of every service and of the
 * gateway (as the production overlay runs them), buyers paying without pause,
 * and a rollout that sends SIGTERM to one process after another (ROLLOUT_RESTARTS, default
 * 20: every process at least once), each started again once it stopped. No
 * request a server accepted may end in a 5xx or a dropped connection; every
 * payment answered is settled once, with one event, delivered to the seller's
 * webhook; nothing is left unpublished in any outbox.
 *
 * Buyers open a connection per request, as an ingress does once it learns a
 * pod is going: a refused connection was never accepted, and the buyer takes
 * the next gateway (the same signed payment: presenting it again is safe).
 */
const RESTARTS = Number(process.env.ROLLOUT_RESTARTS ?? 20);
const BUYERS = 4;
const ORIGIN_DELAY_MS = 300;
const DEMO_MNEMONIC = "test test test test test test test test test test test junk";
/** The test USDC the devchain deploys (at Base Sepolia's USDC address; its mint is open). */
const DEVCHAIN_USDC: Hex = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";

type Kind = "rehearsal" | "relay" | "live" | "quote" | "seller-read";
const KINDS: Kind[] = ["rehearsal", "relay", "live", "quote", "seller-read"];

interface Answer {
  status: number;
  body: string;
}

/** One request on a connection of its own: an answer, or the socket error (ECONNREFUSED: never accepted). */
function send(url: string, headers: Record<string, string>): Promise<Answer | { error: string }> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, headers: { connection: "close", accept: "application/json", ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    });
    req.on("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end();
  });
}

describeWith("postgres")("rolling restart of every distributed process under load (G36)", () => {
  let cluster: LocalCluster | undefined;
  let origin: FakeOrigin;
  let receiver: WebhookReceiver;
  let dataDir: string;
  const adminUrl = process.env[INFRA_ENV.postgres] ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const database = `c402_rollout_${process.pid}`;
  const unexpected: string[] = [];

  beforeAll(async () => {
    origin = await startFakeOrigin();
    receiver = await startWebhookReceiver();
    dataDir = mkdtempSync(join(tmpdir(), "c402-rollout-"));
    cluster = await startLocalCluster({
      adminUrl,
      database,
      kafkaBrokers: process.env[INFRA_ENV.kafka] ?? "127.0.0.1:19092",
      redisUrl: process.env[INFRA_ENV.redis] ?? "redis://127.0.0.1:6379",
      gatewayPort: await freePort(),
      replicas: 2,
      logDir: join(dataDir, "logs"),
      env: {
        ...process.env,
        LOG_LEVEL: "warn",
        DATA_DIR: dataDir,
        AUTH_RATE_LIMIT_PER_MINUTE: "100000",
        OUTBOUND_ALLOW_LOOPBACK: "true",
        OUTBOUND_RESOLVE_NAMES: "false",
      },
      onUnexpectedExit: (p, code, signal) => unexpected.push(`${p.name}.${p.replica} exited by itself (${code ?? signal})`),
    });
  }, 240_000);

  afterAll(async () => {
    await cluster?.stop();
    await dropDatabase(adminUrl, database).catch(() => undefined);
    await origin?.close();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("SIGTERM to each process in turn while buyers pay: no accepted request gets a 5xx or is dropped; every payment settles once, with one event", async () => {
    const c = cluster as LocalCluster;
    const gateways = c.gatewayUrls;
    const base = gateways[0] as string;
    const seller = await signIn(base);
    const auth = { authorization: `Bearer ${seller.api_key.secret}` };
    const hook = await json(`${base}/v1/webhooks`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ url: `${receiver.url}/hook`, events: ["checkout.paid"] }),
    });
    expect(hook.status).toBe(201);
    const create = async (body: Record<string, unknown>) => {
      const created = await json(`${base}/v1/checkouts`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ price_usd: "0.01", reusable: true, ...body }),
      });
      expect(created.status).toBe(201);
      return created.body.id as string;
    };
    const checkouts = {
      inline: await create({ title: "Forecast", payload: { temp_c: 21 } }),
      relay: await create({ title: "Slow forecast", origin_url: `${origin.url}/slow/${ORIGIN_DELAY_MS}`, test_delivery_daily_cap: 100_000 }),
      live: await create({ title: "Live forecast", payload: { temp_c: 22 }, test_mode: false }),
    };
    const requirementOf = async (url: string): Promise<PaymentRequirements> => {
      const quote = await fetch(url);
      expect(quote.status).toBe(402);
      return (decodeHeader(quote.headers.get("payment-required") as string) as unknown as PaymentRequired).accepts[0] as PaymentRequirements;
    };
    const faces: Record<"rehearsal" | "relay" | "live", { path: string; requirement: PaymentRequirements }> = {
      rehearsal: { path: `/c/${checkouts.inline}/test`, requirement: await requirementOf(`${base}/c/${checkouts.inline}/test`) },
      relay: { path: `/c/${checkouts.relay}/test`, requirement: await requirementOf(`${base}/c/${checkouts.relay}/test`) },
      live: { path: `/c/${checkouts.live}`, requirement: await requirementOf(`${base}/c/${checkouts.live}`) },
    };
    const liveBuyers = await fundedBuyers(c, BUYERS);

    // The buyers: each request on a fresh connection, round-robin over the gateways.
    const faults: string[] = [];
    const answered: Record<string, number> = {};
    const paid: { kind: Kind; paymentId: string }[] = [];
    let refused = 0;
    let running = true;
    let turn = 0;
    const oneRequest = async (buyer: number) => {
      const kind = KINDS[turn++ % KINDS.length] as Kind;
      let path: string;
      let headers: Record<string, string> = {};
      if (kind === "quote") path = `/c/${checkouts.inline}/test`;
      else if (kind === "seller-read") {
        path = `/v1/checkouts/${checkouts.relay}`;
        headers = auth;
      } else {
        const face = faces[kind];
        path = face.path;
        const payer = kind === "live" ? (liveBuyers[buyer] as PrivateKeyAccount) : privateKeyToAccount(generatePrivateKey());
        headers = { "payment-signature": encodeHeader(await signExactEvmPayment(payer, face.requirement)) };
      }
      for (let attempt = 0; ; attempt++) {
        const gateway = gateways[(turn + attempt) % gateways.length] as string;
        const answer = await send(`${gateway}${path}`, headers);
        if ("error" in answer) {
          if (answer.error === "ECONNREFUSED" && attempt < 50) {
            refused++;
            await new Promise((r) => setTimeout(r, 20));
            continue; // never accepted: the next gateway
          }
          faults.push(`${kind} ${path}: dropped (${answer.error})`);
          return;
        }
        answered[`${kind} ${answer.status}`] = (answered[`${kind} ${answer.status}`] ?? 0) + 1;
        const expected = kind === "quote" ? [402] : kind === "seller-read" ? [200] : kind === "live" ? [200, 202] : [200];
        if (!expected.includes(answer.status)) faults.push(`${kind} ${path}: ${answer.status} ${answer.body.slice(0, 300)}`);
        else if (kind !== "quote" && kind !== "seller-read") {
          const body = JSON.parse(answer.body) as { receipt?: { id: string }; payment_id?: string };
          paid.push({ kind, paymentId: (body.receipt?.id ?? body.payment_id) as string });
        }
        return;
      }
    };
    const load = Promise.all(
      Array.from({ length: BUYERS }, async (_, buyer) => {
        while (running) await oneRequest(buyer);
      }),
    );

    // The rollout: one process after another (services and gateways interleaved, so the two
    // replicas of one service are never both starting), each SIGTERMed and started again.
    const order = [...c.processes].sort((a, b) => a.replica - b.replica);
    const stops: { process: string; exit: ProcessExit }[] = [];
    try {
      await new Promise((r) => setTimeout(r, 2_000));
      for (let i = 0; i < RESTARTS; i++) {
        const target = order[i % order.length] as ClusterProcess;
        stops.push({ process: `${target.name}.${target.replica}`, exit: await c.restart(target) });
        await new Promise((r) => setTimeout(r, 1_000));
      }
      await new Promise((r) => setTimeout(r, 2_000));
    } finally {
      running = false;
      await load;
    }

    expect(unexpected).toEqual([]);
    // Each process stopped on its own, cleanly, well inside Kubernetes' 30 s grace.
    for (const s of stops)
      expect({ process: s.process, code: s.exit.code, signal: s.exit.signal, inGrace: s.exit.stopMs < 25_000 }).toEqual({
        process: s.process,
        code: 0,
        signal: null,
        inGrace: true,
      });
    expect({ faults: faults.length, first: faults.slice(0, 5) }).toEqual({ faults: 0, first: [] });
    expect(paid.length).toBeGreaterThan(RESTARTS * 2);
    for (const kind of ["rehearsal", "relay", "live"] as const) expect(paid.filter((p) => p.kind === kind).length).toBeGreaterThan(0);

    // Every payment answered is settled once (a pending live one is concluded by its saga), with one event, published.
    const ids = paid.map((p) => p.paymentId);
    expect(new Set(ids).size).toBe(ids.length);
    const db = new pg.Client({ connectionString: new URL(`/${database}`, adminUrl).toString() });
    await db.connect();
    try {
      await eventually(async () => {
        const settled = await db.query<{ id: string }>("select id from payments.payments where status = 'settled'");
        return settled.rows.length === ids.length;
      }, "every payment settled");
      const rows = await db.query<{ id: string; status: string }>("select id, status from payments.payments");
      expect(new Set(rows.rows.map((r) => r.id))).toEqual(new Set(ids));
      await eventually(async () => {
        const unpublished = await Promise.all(
          ["identity", "catalog", "payments", "webhooks", "fulfillment"].map((schema) =>
            db.query(`select count(*)::int as n from ${schema}.outbox where published_at is null`).then(
              (r) => r.rows[0].n as number,
              () => 0, // a service without an outbox
            ),
          ),
        );
        return unpublished.every((n) => n === 0);
      }, "every outbox published");
      const events = await db.query<{ key: string; n: number }>("select key, count(*)::int as n from payments.outbox group by key");
      expect(Object.fromEntries(events.rows.map((r) => [r.key, r.n]))).toEqual(Object.fromEntries(ids.map((id) => [id, 1])));
    } finally {
      await db.end();
    }
    // The seller's webhook heard of every sale: one event each (a redelivery keeps its webhook-id).
    await eventually(async () => new Set(sales(receiver).map((s) => s.paymentId)).size === ids.length, "every sale delivered to the webhook");
    const byPayment = new Map<string, Set<string>>();
    for (const s of sales(receiver)) byPayment.set(s.paymentId, (byPayment.get(s.paymentId) ?? new Set()).add(s.webhookId));
    expect([...byPayment.values()].every((hooks) => hooks.size === 1)).toBe(true);
    expect(new Set(byPayment.keys())).toEqual(new Set(ids));
    process.stdout.write(`rollout: ${stops.length} SIGTERMs, ${paid.length} payments, ${refused} refused connections retried; ${JSON.stringify(answered)}\n`);
  }, 900_000);
});

function sales(receiver: WebhookReceiver): { paymentId: string; webhookId: string }[] {
  return receiver.received
    .filter((r) => r.answered === "200")
    .map((r) => ({ paymentId: (JSON.parse(r.rawBody) as { data: { payment_id: string } }).data.payment_id, webhookId: r.headers["webhook-id"] as string }));
}

/** Buyers holding test USDC on the cluster's devchain (minted one at a time: one minter, one nonce queue). */
async function fundedBuyers(c: LocalCluster, count: number): Promise<PrivateKeyAccount[]> {
  const rpcUrl = (c.devchain as { url: string }).url;
  const pub = createPublicClient({ transport: http(rpcUrl) });
  const minter = createWalletClient({ account: mnemonicToAccount(DEMO_MNEMONIC, { addressIndex: 7 }), transport: http(rpcUrl) });
  const buyers = Array.from({ length: count }, () => privateKeyToAccount(generatePrivateKey()));
  for (const b of buyers) {
    const hash = await minter.writeContract({ address: DEVCHAIN_USDC, abi: TestUSDC.abi, functionName: "mint", args: [b.address, 100_000_000n], chain: null });
    await pub.waitForTransactionReceipt({ hash });
  }
  return buyers;
}

async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 90_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
