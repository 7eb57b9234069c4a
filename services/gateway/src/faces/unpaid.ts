import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { catalogV1 } from "@c402/contracts";
import { answered } from "@c402/rpc";
import { encodeHeader } from "@c402/x402";
import type { ServiceClients } from "../http/deps";
import { bigintAsString } from "../http/json";
import { paymentRequiredBody } from "../views/payment-required";
import { fulfillmentName } from "../views/checkouts";
import { forgetFaces, variantOf, type FaceQuotes, type Goods, type UnpaidAnswer } from "./answers";
import { FACE_PROTO, type Face, type WireVersion } from "./face";

/**
 * The unpaid 402 answers of the faces: from the quote cache, or asked of
 * catalog and payments and then kept there for the fast path and the next
 * request.
 */
export class UnpaidAnswers {
  constructor(
    private readonly clients: Pick<ServiceClients, "payments">,
    private readonly baseUrl: string,
    private readonly quotes: FaceQuotes,
  ) {}

  /** The unpaid 402 of a face. */
  async of(id: string, face: Face, wireVersion: WireVersion): Promise<UnpaidAnswer> {
    const variant = variantOf(face, wireVersion);
    const cached = this.quotes.get(id, variant);
    if (cached) return cached;
    // Payments reads the checkout for the quote and hands it back: one catalog read.
    const quote = await this.clients.payments.quotePayment({ checkoutId: id, face: FACE_PROTO[face] });
    const checkout = answered(quote.checkout, "checkout");
    const { required, body } = paymentRequiredBody({ checkout, quote, face, baseUrl: this.baseUrl, wireVersion });
    const answer = {
      title: checkout.title,
      accountId: checkout.accountId,
      goods: goodsOf(checkout),
      page: { walletButton: checkout.settings?.walletButton ?? false, series: checkout.schedule !== undefined },
      required,
      header: encodeHeader(required),
      body,
      json: JSON.stringify(body, bigintAsString),
    };
    this.quotes.set(id, variant, answer, checkout.expiresAt ? timestampMs(checkout.expiresAt) : undefined);
    return answer;
  }

  /** The face's current v2 answer, or undefined when it cannot be had (a checkout that no longer sells). */
  current(id: string, face: Face): Promise<UnpaidAnswer | undefined> {
    return this.of(id, face, 2).catch(() => undefined);
  }

  /** A sale ends a single-shot checkout's selling: the next unpaid request asks again. */
  sold(id: string, goods: Goods): void {
    if (!goods.reusable) forgetFaces(this.quotes, id);
  }
}

/** What a paid request delivers, from the checkout payments read for the quote or the sale. */
export function goodsOf(checkout: catalogV1.Checkout): Goods {
  return { mode: fulfillmentName(checkout.fulfillment), payloadJson: checkout.payloadJson, reusable: checkout.reusable };
}
