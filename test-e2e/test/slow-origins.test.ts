import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startFakeMcpServer, type FakeMcpServer } from "@c402/testkit/fake-mcp-server";
import { encodeHeader, signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import type { PrivateKeyAccount } from "viem/accounts";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { devchainWallets, type DevchainWallets } from "../src/devchain";
import { call, decoded, newCheckout, newSeller, type Reply } from "../src/http";

/**
 * Slow origins (issue 43, ADR 9 "Deadlines"): every deadline on the way is
 * ordered so that the origin's own timeout fires first. A relay or mcp buyer
 * gets, in the same answer, the goods with the receipt (an origin that takes
 * 8 s or 20 s delivers), or the charge table's 502 `upstream-failed` with
 * nothing charged (one that never answers, sends its headers and stalls the
 * body, or trickles bytes), never a timeout of ours while the sale goes on
 * behind it; and nothing is settled afterwards. A package call is counted
 * only when its answer reached the buyer. Live (the devchain) and rehearsal,
 * per call and package, in whichever run mode the suite targets.
 */

const ORIGIN_TIMEOUT_S = 30;
const BEHAVIOURS = ["slow8", "slow20", "never", "stall", "trickle"] as const;
type Behaviour = (typeof BEHAVIOURS)[number] | "fast";
const DELIVERS: ReadonlySet<Behaviour> = new Set(["slow8", "slow20"]);

/** A seller's API whose behaviour the buyer's `behave` parameter picks; every call counted by behaviour. */
async function behavingOrigin(): Promise<{ url: string; calls: Map<string, number>; close: () => Promise<void> }> {
  const calls = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const behave = (new URL(req.url ?? "/", "http://x").searchParams.get("behave") ?? "fast") as Behaviour;
    calls.set(behave, (calls.get(behave) ?? 0) + 1);
    const goods = () => void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ behave, goods: true }));
    const later = (ms: number) => {
      const timer = setTimeout(goods, ms);
      res.on("close", () => clearTimeout(timer));
    };
    if (behave === "fast") return goods();
    if (behave === "slow8") return later(8_000);
    if (behave === "slow20") return later(20_000);
    if (behave === "never") return;
    res.writeHead(200, { "content-type": "application/json" });
    if (behave === "stall") return void res.write('{"partial":');
    const trickle = setInterval(() => res.write(" "), 200);
    res.on("close", () => clearInterval(trickle));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`,
    calls,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function signed(buyer: PrivateKeyAccount, path: string) {
  const r = await call("GET", path.split("?")[0] as string);
  expect(r.status).toBe(402);
  const required = decoded(r.headers.get("payment-required"));
  return encodeHeader(await signExactEvmPayment(buyer, required.accepts[0] as PaymentRequirements, { resourceUrl: required.resource.url }));
}
const pay = (path: string, payment: string) => call("GET", path, { headers: { "PAYMENT-SIGNATURE": payment } });
const timed = async (request: Promise<Reply>) => {
  const started = Date.now();
  const reply = await request;
  return { reply, seconds: (Date.now() - started) / 1000 };
};

/** What the buyer must get from a purchase or a package call whose origin behaves so. */
function expectOutcome(behave: Behaviour, { reply, seconds }: { reply: Reply; seconds: number }) {
  if (DELIVERS.has(behave)) {
    expect([behave, reply.status]).toEqual([behave, 200]);
    expect(reply.body.fulfillment?.payload ?? reply.body.payload).toEqual({ behave, goods: true });
    return;
  }
  expect([behave, reply.status, reply.body.reason, reply.body.charged]).toEqual([behave, 502, "timeout", false]);
  // The origin's own timeout decided it, not a deadline of ours cutting in first.
  expect(seconds).toBeGreaterThanOrEqual(ORIGIN_TIMEOUT_S - 6);
}

describe("slow origins: the goods with the receipt, or 502 and no charge, in the same answer", () => {
  let origin: Awaited<ReturnType<typeof behavingOrigin>>;
  let mcp: FakeMcpServer;
  let seller: Awaited<ReturnType<typeof newSeller>>;
  let chain: DevchainWallets;
  const relay = (extra: Record<string, unknown> = {}) =>
    newCheckout(seller.key, { title: "Slow API", price_usd: "0.10", payload: undefined, origin_url: origin.url, reusable: true, ...extra });
  const salesOf = async (checkoutId: string, testMode: boolean) =>
    ((await call("GET", `/v1/receipts?test_mode=${testMode}&limit=100`, { key: seller.key })).body.receipts as { checkout_id: string }[]).filter(
      (r) => r.checkout_id === checkoutId,
    ).length;

  beforeAll(async () => {
    origin = await behavingOrigin();
    mcp = await startFakeMcpServer({ tools: [{ name: "forecast", inputSchema: { type: "object" }, answer: () => "sunny after 8 s", delayMs: 8_000 }] });
    seller = await newSeller();
    chain = await devchainWallets(19);
  });
  afterAll(async () => {
    await mcp.close();
    await origin.close();
  });

  it("per call, rehearsal and live: 8 s and 20 s origins deliver; never, stalled and trickling ones are 502 with nothing charged, then or later", async () => {
    const rehearsal = await relay();
    const live = await relay({ test_mode: false });
    expect((await call("POST", `/v1/checkouts/${live.id}/go-live`, { key: seller.key })).status).toBe(200);
    const tool = await newCheckout(seller.key, { title: "Slow tool", price_usd: "0.10", payload: undefined, origin_url: mcp.url, mcp_tool: "forecast" });
    const buyers: PrivateKeyAccount[] = [];
    // One at a time: the funder's transactions take its nonces in turn.
    for (const _ of BEHAVIOURS) buyers.push(await chain.fundedBuyer(1_000_000n));
    const rehearsalBuyer = privateKeyToAccount(generatePrivateKey());

    const [rehearsals, lives, toolCall] = await Promise.all([
      Promise.all(
        BEHAVIOURS.map(async (behave) => {
          const path = `/c/${rehearsal.id}/test?behave=${behave}`;
          return timed(pay(path, await signed(rehearsalBuyer, path)));
        }),
      ),
      Promise.all(
        BEHAVIOURS.map(async (behave, i) => {
          const path = `/c/${live.id}?behave=${behave}`;
          return timed(pay(path, await signed(buyers[i]!, path)));
        }),
      ),
      (async () => {
        const path = `/c/${tool.id}/test`;
        return timed(pay(path, await signed(rehearsalBuyer, path)));
      })(),
    ]);
    BEHAVIOURS.forEach((behave, i) => expectOutcome(behave, rehearsals[i]!));
    BEHAVIOURS.forEach((behave, i) => expectOutcome(behave, lives[i]!));
    expect(toolCall.reply.status).toBe(200);
    expect(JSON.stringify(toolCall.reply.body.fulfillment)).toContain("sunny after 8 s");

    // What was answered is what was sold: a receipt for each delivery, the buyers charged once each, the others not at all.
    for (const [i, behave] of BEHAVIOURS.entries()) {
      const reply = lives[i]!.reply;
      const charged = DELIVERS.has(behave) ? BigInt(reply.body.receipt.total) : 0n;
      expect([behave, await chain.balance(buyers[i]!.address)]).toEqual([behave, 1_000_000n - charged]);
    }
    expect(await salesOf(rehearsal.id, true)).toBe(DELIVERS.size);
    expect(await salesOf(live.id, false)).toBe(DELIVERS.size);
    // Each origin was called once per purchase, whatever it did.
    for (const behave of BEHAVIOURS) expect([behave, origin.calls.get(behave)]).toEqual([behave, 2]);
  }, 90_000);

  it("packages, rehearsal and live: a call counts only when its answer reached the buyer; a failed one is given back", async () => {
    const rehearsal = await relay({ price_usd: "1.00", max_deliveries: 20, test_delivery_daily_cap: 1000 });
    const live = await relay({ price_usd: "1.00", max_deliveries: 20, test_mode: false });
    expect((await call("POST", `/v1/checkouts/${live.id}/go-live`, { key: seller.key })).status).toBe(200);
    const liveBuyer = await chain.fundedBuyer(2_000_000n);
    const rehearsalBuyer = privateKeyToAccount(generatePrivateKey());
    const keyOf = async (path: string, buyer: PrivateKeyAccount) => {
      const bought = await pay(`${path}?behave=fast`, await signed(buyer, `${path}?behave=fast`));
      expect(bought.status).toBe(200);
      return bought.body.package_key as string;
    };
    const keys = { rehearsal: await keyOf(`/c/${rehearsal.id}/test`, rehearsalBuyer), live: await keyOf(`/c/${live.id}`, liveBuyer) };
    const spends = await Promise.all(
      (["rehearsal", "live"] as const).map((face) =>
        Promise.all(
          BEHAVIOURS.map((behave) =>
            timed(call("GET", `/c/${face === "live" ? live.id : rehearsal.id}?behave=${behave}`, { headers: { Authorization: `Bearer ${keys[face]}` } })),
          ),
        ),
      ),
    );
    for (const [f, face] of (["rehearsal", "live"] as const).entries()) {
      BEHAVIOURS.forEach((behave, i) => expectOutcome(behave, spends[f]![i]!));
      const id = face === "live" ? live.id : rehearsal.id;
      const usage = await call("GET", `/c/${id}/usage`, { headers: { Authorization: `Bearer ${keys[face]}` } });
      expect(usage.status).toBe(200);
      // The purchase's call and the two that delivered are counted; the three the origin failed were given back.
      expect(usage.body).toMatchObject({ calls_used: 1 + DELIVERS.size, calls_remaining: 20 - 1 - DELIVERS.size });
      const calls = usage.body.calls as { status: number; counted: boolean }[];
      expect(calls.filter((c) => c.counted)).toHaveLength(1 + DELIVERS.size);
      expect(calls.filter((c) => !c.counted)).toHaveLength(BEHAVIOURS.length - DELIVERS.size);
    }
  }, 90_000);
});
