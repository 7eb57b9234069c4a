import { request } from "node:http";
import { TestUSDC } from "@c402/evm-contracts";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { startWebhookReceiver, type WebhookReceiver } from "@c402/testkit/webhook-receiver";
import { decodeHeader, encodeHeader, signExactEvmPayment, type PaymentRequired, type PaymentRequirements } from "@c402/x402";
import { createPublicClient, createWalletClient, http, type Hex } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { json, signIn } from "../../../embedded/test/seller";
import type { LocalCluster } from "../../src/cluster";

/**
 * Buyers paying a distributed cluster without pause, for the tests that break
 * it meanwhile (the rolling restart, the failure drills): a seller with a
 * `checkout.paid` webhook and three checkouts (inline goods rehearsed, a relay
 * to a slow origin rehearsed, inline goods sold live on the devchain), and a
 * loop per buyer over the kinds of request. Every answer is recorded, with
 * its latency; what a test accepts is its own to say (unexpectedAnswers).
 *
 * Each request goes on a connection of its own, as an ingress sends it once it
 * learns a pod is going: a refused connection was never accepted, and the
 * buyer takes the next gateway with the same signed payment (presenting it
 * again is safe).
 */

const DEMO_MNEMONIC = "test test test test test test test test test test test junk";
/** The test USDC the devchain deploys (at Base Sepolia's USDC address; its mint is open). */
const DEVCHAIN_USDC: Hex = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
/** How long the relay checkout's origin takes to answer. */
const ORIGIN_DELAY_MS = 300;

export type PaidKind = "rehearsal" | "relay" | "live";

/** One kind of request the buyers send in turn. */
export interface RequestKind {
  name: string;
  /** The statuses that answer it rightly. */
  expected: number[];
  /** True when a right answer names a payment (its receipt or payment_id). */
  paid?: boolean;
  /** The request to send; called once per request (a paid kind signs a new payment, for the buyer `buyer`). */
  build(buyer: number): Promise<Outgoing>;
}

export interface Outgoing {
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** The seller's side of the traffic: its key and checkouts, and the live buyers' funded wallets. */
export interface Shop {
  auth: { authorization: string };
  checkouts: { inline: string; relay: string; live: string };
  faces: Record<PaidKind, { path: string; requirement: PaymentRequirements }>;
  liveBuyers: PrivateKeyAccount[];
}

/**
 * The environment of a cluster these buyers drive: warnings and errors only in
 * its logs, its files under `dataDir`, sign-ins not throttled, and the seller's
 * origin allowed on loopback.
 */
export function clusterEnvironment(dataDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    LOG_LEVEL: "warn",
    DATA_DIR: dataDir,
    AUTH_RATE_LIMIT_PER_MINUTE: "100000",
    OUTBOUND_ALLOW_LOOPBACK: "true",
    OUTBOUND_RESOLVE_NAMES: "false",
  };
}

/** The seller's own servers on loopback: the relay checkout's origin and the webhook's receiver. */
export async function startSellerServers(): Promise<{ origin: FakeOrigin; receiver: WebhookReceiver; close(): Promise<void> }> {
  const [origin, receiver] = await Promise.all([startFakeOrigin(), startWebhookReceiver()]);
  return { origin, receiver, close: async () => void (await Promise.all([origin.close(), receiver.close()])) };
}

/**
 * Signs a seller in at `base`, subscribes `receiver` to `checkout.paid`,
 * creates the three checkouts (the relay one's rehearsals capped at 100,000
 * a day, the most allowed) and funds `buyers` live buyers with test USDC,
 * minted by the devchain account `minterIndex` (a test of its own per index:
 * one account, one nonce queue).
 */
export async function openShop(
  c: LocalCluster,
  base: string,
  deps: { receiver: WebhookReceiver; origin: FakeOrigin },
  opts: { buyers: number; minterIndex: number },
): Promise<Shop> {
  const seller = await signIn(base);
  const auth = { authorization: `Bearer ${seller.api_key.secret}` };
  const hook = await json(`${base}/v1/webhooks`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ url: `${deps.receiver.url}/hook`, events: ["checkout.paid"] }),
  });
  answeredAs(hook.status, 201, "the webhook subscription");
  const create = async (body: Record<string, unknown>) => {
    const created = await json(`${base}/v1/checkouts`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ price_usd: "0.01", reusable: true, ...body }),
    });
    answeredAs(created.status, 201, `the checkout ${String(body.title)}`);
    return created.body.id as string;
  };
  const checkouts = {
    inline: await create({ title: "Forecast", payload: { temp_c: 21 } }),
    relay: await create({
      title: "Slow forecast",
      origin_url: `${deps.origin.url}/slow/${ORIGIN_DELAY_MS}`,
      test_delivery_daily_cap: 100_000,
    }),
    live: await create({ title: "Live forecast", payload: { temp_c: 22 }, test_mode: false }),
  };
  const requirementOf = async (path: string): Promise<PaymentRequirements> => {
    const quote = await fetch(`${base}${path}`);
    answeredAs(quote.status, 402, `the quote of ${path}`);
    return (decodeHeader(quote.headers.get("payment-required") as string) as unknown as PaymentRequired).accepts[0] as PaymentRequirements;
  };
  const face = async (path: string) => ({ path, requirement: await requirementOf(path) });
  return {
    auth,
    checkouts,
    faces: {
      rehearsal: await face(`/c/${checkouts.inline}/test`),
      relay: await face(`/c/${checkouts.relay}/test`),
      live: await face(`/c/${checkouts.live}`),
    },
    liveBuyers: await fundedBuyers(c, opts.buyers, opts.minterIndex),
  };
}

/** The sales traffic: rehearsal, relay and live payments, unpaid quotes and the seller reading a checkout. */
export function salesKinds(shop: Shop): RequestKind[] {
  const paid = (kind: PaidKind): RequestKind => ({
    name: kind,
    expected: kind === "live" ? [200, 202] : [200],
    paid: true,
    async build(buyer) {
      const face = shop.faces[kind];
      const payer = kind === "live" ? (shop.liveBuyers[buyer % shop.liveBuyers.length] as PrivateKeyAccount) : privateKeyToAccount(generatePrivateKey());
      return { path: face.path, headers: { "payment-signature": encodeHeader(await signExactEvmPayment(payer, face.requirement)) } };
    },
  });
  return [
    paid("rehearsal"),
    paid("relay"),
    paid("live"),
    { name: "quote", expected: [402], build: async () => ({ path: shop.faces.rehearsal.path }) },
    { name: "seller-read", expected: [200], build: async () => ({ path: `/v1/checkouts/${shop.checkouts.relay}`, headers: shop.auth }) },
  ];
}

/** One answer the buyers got. */
export interface Answer {
  kind: string;
  path: string;
  status: number;
  retryAfter?: string;
  body: string;
  /** When the request was sent (epoch ms) and how long its answer took. */
  at: number;
  ms: number;
}

export interface TrafficOptions {
  gateways: string[];
  kinds: RequestKind[];
  buyers: number;
  /**
   * Present a paid request again, the same signed payment, when told to retry
   * later (retryLater: as a buyer told the retry is safe does), until it is
   * answered otherwise or `retryForMs` passes. Each answer is recorded too.
   */
  retryLater?: boolean;
  retryForMs?: number;
  /** An answer that takes longer is a hang: its connection is cut and it counts as a fault. */
  hangMs?: number;
}

export interface TrafficResult {
  answers: Answer[];
  /** Connections dropped or hung, and paid requests still unavailable when their retries ran out. */
  faults: string[];
  /** The payments answered (a receipt or a pending payment), by kind. */
  paid: { kind: string; paymentId: string }[];
  /** Connections refused (never accepted) and sent to the next gateway. */
  refused: number;
}

export interface Traffic {
  /** The answers so far (the list grows while the buyers run). */
  readonly answers: readonly Answer[];
  stop(): Promise<TrafficResult>;
}

/** Starts `buyers` loops, each sending the kinds in turn, round-robin over the gateways, until stopped. */
export function startTraffic(opts: TrafficOptions): Traffic {
  const hangMs = opts.hangMs ?? 70_000;
  const retryForMs = opts.retryForMs ?? 180_000;
  const result: TrafficResult = { answers: [], faults: [], paid: [], refused: 0 };
  let running = true;
  let turn = 0;
  const oneRequest = async (buyer: number) => {
    const kind = opts.kinds[turn++ % opts.kinds.length] as RequestKind;
    const outgoing = await kind.build(buyer);
    const firstSent = Date.now();
    for (let attempt = 0; ; attempt++) {
      const gateway = opts.gateways[(turn + attempt) % opts.gateways.length] as string;
      const at = Date.now();
      const answer = await send(`${gateway}${outgoing.path}`, outgoing, hangMs);
      if ("error" in answer) {
        if (answer.error === "ECONNREFUSED" && attempt < 50) {
          result.refused++;
          await pause(20);
          continue; // never accepted: the next gateway
        }
        result.faults.push(`${kind.name} ${outgoing.path}: ${answer.error === "hung" ? `no answer within ${hangMs} ms` : `dropped (${answer.error})`}`);
        return;
      }
      result.answers.push({ kind: kind.name, path: outgoing.path, ...answer, at, ms: Date.now() - at });
      if (kind.paid && opts.retryLater && retryLater(answer)) {
        if (Date.now() - firstSent < retryForMs) {
          // Retry-After as told, within a second: the buyer keeps trying while the drill lasts.
          await pause(Math.min(1_000, Number(answer.retryAfter) * 1_000));
          continue;
        }
        result.faults.push(`${kind.name} ${outgoing.path}: still ${answer.status} after ${retryForMs} ms of retries`);
        return;
      }
      if (kind.paid && kind.expected.includes(answer.status)) {
        const body = JSON.parse(answer.body) as { receipt?: { id: string }; payment_id?: string };
        result.paid.push({ kind: kind.name, paymentId: (body.receipt?.id ?? body.payment_id) as string });
      }
      return;
    }
  };
  const loops = Promise.all(
    Array.from({ length: opts.buyers }, async (_, buyer) => {
      while (running) await oneRequest(buyer);
    }),
  );
  return {
    answers: result.answers,
    async stop() {
      running = false;
      await loops;
      return result;
    },
  };
}

/**
 * The answers that are not right for their kind, described; `tolerate` lets
 * some through (a drill's documented fail-closed 503s while its fault lasts).
 */
export function unexpectedAnswers(answers: readonly Answer[], kinds: readonly RequestKind[], tolerate: (a: Answer) => boolean = () => false): string[] {
  const expected = new Map(kinds.map((k) => [k.name, k.expected]));
  return answers
    .filter((a) => !(expected.get(a.kind) ?? []).includes(a.status) && !tolerate(a))
    .map((a) => `${a.kind} ${a.path}: ${a.status}${a.retryAfter === undefined ? "" : ` (Retry-After ${a.retryAfter})`} ${a.body.slice(0, 300)}`);
}

/** A refusal as the gateway documents one for a component it lacks (it decided nothing): 503 with Retry-After. */
export const unavailableWithRetryAfter = (a: Pick<Answer, "status" | "retryAfter">): boolean => a.status === 503 && a.retryAfter !== undefined;

/**
 * An answer that tells the buyer to present the same payment later: 503 with
 * Retry-After, or 409 with Retry-After (an earlier request with this payment
 * is unfinished, or its claim was released: ADR 9).
 */
export const retryLater = (a: Pick<Answer, "status" | "retryAfter">): boolean =>
  unavailableWithRetryAfter(a) || (a.status === 409 && a.retryAfter !== undefined);

/** The `q` quantile (0–1) of the answers' latencies, in ms (0 for none). */
export function latencyQuantile(answers: readonly Answer[], q: number): number {
  const sorted = answers.map((a) => a.ms).sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number);
}

/** How many answers of each kind had each status: `{"relay 200": 12, …}`. */
export function tally(answers: readonly Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of answers) counts[`${a.kind} ${a.status}`] = (counts[`${a.kind} ${a.status}`] ?? 0) + 1;
  return counts;
}

/** Throws unless the setup request was answered as it should be (also outside jest: the soak uses openShop). */
function answeredAs(status: number, expected: number, what: string): void {
  if (status !== expected) throw new Error(`${what} answered ${status}, not ${expected}`);
}

/** One request on a connection of its own: an answer, or the socket error (ECONNREFUSED: never accepted; "hung": no answer in time). */
export function send(url: string, out: Outgoing, hangMs: number): Promise<{ status: number; retryAfter?: string; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: out.method ?? "GET", agent: false, headers: { connection: "close", accept: "application/json", ...out.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const retryAfter = res.headers["retry-after"];
          resolve({ status: res.statusCode ?? 0, ...(retryAfter === undefined ? {} : { retryAfter }), body: Buffer.concat(chunks).toString("utf8") });
        });
        res.on("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
      },
    );
    req.setTimeout(hangMs, () => {
      resolve({ error: "hung" });
      req.destroy();
    });
    req.on("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    if (out.body !== undefined) req.setHeader("content-type", "application/json");
    req.end(out.body);
  });
}

/** Buyers holding test USDC on the cluster's devchain (minted one at a time: one minter, one nonce queue). */
async function fundedBuyers(c: LocalCluster, count: number, minterIndex: number): Promise<PrivateKeyAccount[]> {
  const rpcUrl = (c.devchain as { url: string }).url;
  const pub = createPublicClient({ transport: http(rpcUrl) });
  const minter = createWalletClient({ account: mnemonicToAccount(DEMO_MNEMONIC, { addressIndex: minterIndex }), transport: http(rpcUrl) });
  const buyers = Array.from({ length: count }, () => privateKeyToAccount(generatePrivateKey()));
  for (const b of buyers) {
    const hash = await minter.writeContract({ address: DEVCHAIN_USDC, abi: TestUSDC.abi, functionName: "mint", args: [b.address, 100_000_000n], chain: null });
    await pub.waitForTransactionReceipt({ hash });
  }
  return buyers;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
