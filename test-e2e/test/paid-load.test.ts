import { startWebhookReceiver, type WebhookReceiver } from "@c402/testkit/webhook-receiver";
import { encodeHeader, signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { call, decoded, newCheckout, newSeller } from "../src/http";

/**
 * Issue 16's guarantee under the paid benchmark's load: 16 buyers paying at
 * once on a rehearsal face, every payment a fresh authorization, and one in
 * ten sent twice at the same moment (a buyer's retry racing its original).
 * Afterwards nothing is lost, doubled or left unrecorded: every payment
 * answered 200 with its receipt (a racing copy the same receipt), the ledger
 * holds exactly one receipt per authorization, and the seller's receiver got
 * exactly one checkout.paid per payment.
 */
const BUYERS = 16;
const PAYMENTS = 320;
const TWICE_EVERY = 10;

interface Answer {
  status: number;
  receiptId: string | undefined;
  redelivered: boolean | undefined;
}

describe("the paid path under load", () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver.close());

  it(`${PAYMENTS} payments from ${BUYERS} buyers at once, one in ${TWICE_EVERY} sent twice together: one receipt and one webhook each, none lost`, async () => {
    const seller = await newSeller();
    const hook = await call("POST", "/v1/webhooks", { key: seller.key, body: { url: `${receiver.url}/hook`, events: ["checkout.paid"] } });
    expect(hook.status).toBe(201);
    const checkout = await newCheckout(seller.key, { title: "Under load", reusable: true });
    const quote = await call("GET", `/c/${checkout.id}/test`);
    const required = decoded(quote.headers.get("payment-required"));
    const requirement = required.accepts[0] as PaymentRequirements;
    const buyers = Array.from({ length: BUYERS }, () => privateKeyToAccount(generatePrivateKey()));
    const payments: string[] = [];
    for (let i = 0; i < PAYMENTS; i++) {
      payments.push(encodeHeader(await signExactEvmPayment(buyers[i % BUYERS]!, requirement, { resourceUrl: required.resource.url })));
    }

    const pay = async (header: string): Promise<Answer> => {
      const r = await call("GET", `/c/${checkout.id}/test`, { headers: { "PAYMENT-SIGNATURE": header } });
      return { status: r.status, receiptId: r.body?.receipt?.id, redelivered: r.body?.redelivered };
    };
    const answers: Answer[][] = new Array(PAYMENTS);
    let next = 0;
    await Promise.all(
      Array.from({ length: BUYERS }, async () => {
        for (let i = next++; i < PAYMENTS; i = next++) {
          const header = payments[i]!;
          answers[i] = i % TWICE_EVERY === 0 ? await Promise.all([pay(header), pay(header)]) : [await pay(header)];
        }
      }),
    );

    // Every request was answered 200 with a receipt; a payment sent twice answered one receipt, once as new.
    const receiptIds = new Set<string>();
    for (const [i, sent] of answers.entries()) {
      expect({ i, statuses: sent.map((a) => a.status) }).toEqual({ i, statuses: sent.map(() => 200) });
      const ids = new Set(sent.map((a) => a.receiptId));
      expect(ids.size).toBe(1);
      expect([...ids][0]).toMatch(/^pay_/);
      expect(sent.filter((a) => a.redelivered === false)).toHaveLength(1);
      receiptIds.add([...ids][0]!);
    }
    expect(receiptIds.size).toBe(PAYMENTS);

    // The ledger: exactly the receipts answered, each once.
    const ledger: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof call>> = await call("GET", `/v1/receipts?test_mode=true&limit=100${cursor ? `&cursor=${cursor}` : ""}`, {
        key: seller.key,
      });
      expect(page.status).toBe(200);
      ledger.push(...(page.body.receipts as { id: string }[]).map((r) => r.id));
      cursor = page.body.next_cursor as string | null;
    } while (cursor);
    expect(ledger).toHaveLength(PAYMENTS);
    expect(new Set(ledger)).toEqual(receiptIds);

    // The events: one checkout.paid per payment reached the seller's receiver, none twice.
    await receiver.waitFor(PAYMENTS, 60_000);
    await new Promise((r) => setTimeout(r, 1_000)); // room for a duplicate to show
    const sales = receiver.received.map((d) => JSON.parse(d.rawBody) as { event: string; data: { payment_id: string } });
    expect(sales.every((s) => s.event === "checkout.paid")).toBe(true);
    expect(sales).toHaveLength(PAYMENTS);
    expect(new Set(sales.map((s) => s.data.payment_id))).toEqual(receiptIds);
  }, 300_000);
});
