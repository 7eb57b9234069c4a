import type { catalogV1 } from "@c402/contracts";
import { isId } from "@c402/ids";
import type { Response } from "express";
import type { UnpaidAnswer } from "../faces/answers";
import type { Face } from "../faces/face";
import { payPage, type PayPageInput } from "./pay-page";

/** What every face's page takes from its unpaid 402. */
function fromAnswer(answer: UnpaidAnswer, face: Face, frameOrigins: readonly (string | null | undefined)[], params: Record<string, string>) {
  const { body } = answer;
  const rehearsal = body.endpoint.rehearsal as { live_url?: string | null };
  return {
    face,
    faceUrl: body.endpoint.url,
    title: answer.title,
    offer: body.offer,
    accepts: answer.required.accepts,
    simulated: body.endpoint.settlement === "simulated",
    liveUrl: rehearsal.live_url ?? null,
    walletButton: answer.page.walletButton,
    frameOrigins,
    params,
  } satisfies Partial<PayPageInput>;
}

/** The pay page of a checkout's face (/c/{id}, /e/{id} and their /test twins) from its unpaid 402. */
export function checkoutPayPage(p: {
  id: string;
  face: Face;
  answer: UnpaidAnswer;
  frameOrigins: readonly string[];
  params: Record<string, string>;
  handoffIn: string | undefined;
}) {
  return payPage({
    ...fromAnswer(p.answer, p.face, p.frameOrigins, p.params),
    kind: isId("escrowCheckout", p.id) ? "escrow" : "checkout",
    checkoutId: p.id,
    handoffIn: p.handoffIn,
    series: p.answer.page.series,
  });
}

/** The wall of a gated article (/x/{id} without a pass): the same page, with the teaser and the pass's terms. */
export function articlePayPage(p: {
  checkout: catalogV1.Checkout;
  face: Face;
  answer: UnpaidAnswer;
  frameOrigins: readonly string[];
  params: Record<string, string>;
  article: NonNullable<PayPageInput["article"]>;
}) {
  return payPage({
    ...fromAnswer(p.answer, p.face, p.frameOrigins, p.params),
    kind: "article",
    checkoutId: p.checkout.id,
    handoffIn: undefined,
    series: false,
    article: p.article,
  });
}

/** A page's own headers replace the face's defaults: its policy, and X-Frame-Options only when nothing may frame it. */
export function setPageHeaders(res: Response, headers: readonly (readonly [string, string])[]): void {
  res.removeHeader("X-Frame-Options");
  for (const [name, value] of headers) res.setHeader(name, value);
}
