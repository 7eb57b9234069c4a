import type { catalogV1 } from "@c402/contracts";
import type { ServiceClients } from "../http/deps";
import type { Face } from "./face";

/** The rehearsal budget a checkout declares (test_delivery_daily_cap), or the spec's default. */
const DEFAULT_DAILY_CAP = 25;

/** Whether a face of the article settles simulated: the test face, or the live one before go-live. */
export function isRehearsalFace(checkout: catalogV1.Checkout, face: Face): boolean {
  return face === "test" || !checkout.armed;
}

/**
 * A gated article's rehearsal deliveries (docs/decisions.md "Gated content"):
 * a rehearsal face delivers the same article as the live one, so each answer
 * that carries it there (an inline article's purchase, every pass read) is
 * counted against the checkout's test_delivery_daily_cap for the UTC day,
 * like a relay or mcp rehearsal delivery; past it, 429 with the live face's
 * URL and nothing delivered.
 */
export class ArticleRehearsals {
  constructor(private readonly clients: Pick<ServiceClients, "fulfillment">) {}

  /** Counts one delivery (429 rate-limited past the cap): what the day's budget has left, for the X-RateLimit-* headers. */
  async count(checkout: catalogV1.Checkout): Promise<{ limit: number; remaining: number; resetSeconds: number }> {
    const limit = checkout.settings?.testDeliveryDailyCap ?? DEFAULT_DAILY_CAP;
    const r = await this.clients.fulfillment.countRehearsalDelivery({ checkoutId: checkout.id, testDeliveryDailyCap: limit });
    return { limit, remaining: r.testDeliveriesLeft, resetSeconds: r.testDeliveriesResetSeconds };
  }
}
