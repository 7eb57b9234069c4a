import type { catalogV1 } from "@c402/contracts";
import { isId } from "@c402/ids";
import type { Response } from "express";
import type { UnpaidAnswer } from "../faces/answers";
import type { Face } from "../faces/face";
import { payPage } from "./pay-page";

/** The pay page of a checkout's face (/c/{id}, /e/{id} and their /test twins) from its unpaid 402. */
export function checkoutPayPage(p: {
  id: string;
  face: Face;
  answer: UnpaidAnswer;
  frameOrigins: readonly string[];
  params: Record<string, string>;
  handoffIn: string | undefined;
}) {
  const { body } = p.answer;
  const rehearsal = body.endpoint.rehearsal as { live_url?: string | null };
  return payPage({
    kind: isId("escrowCheckout", p.id) ? "escrow" : "checkout",
    checkoutId: p.id,
    face: p.face,
    faceUrl: body.endpoint.url,
    title: p.answer.title,
    offer: body.offer,
    accepts: p.answer.required.accepts,
    simulated: body.endpoint.settlement === "simulated",
    liveUrl: rehearsal.live_url ?? null,
    walletButton: p.answer.page.walletButton,
    frameOrigins: p.frameOrigins,
    params: p.params,
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
  article: { teaser: string | null; byline: string; passHours: number; language: string; passQuery: string };
}) {
  const { body } = p.answer;
  const rehearsal = body.endpoint.rehearsal as { live_url?: string | null };
  return payPage({
    kind: "article",
    checkoutId: p.checkout.id,
    face: p.face,
    faceUrl: body.endpoint.url,
    title: p.answer.title,
    offer: body.offer,
    accepts: p.answer.required.accepts,
    simulated: body.endpoint.settlement === "simulated",
    liveUrl: rehearsal.live_url ?? null,
    walletButton: p.answer.page.walletButton,
    frameOrigins: p.frameOrigins,
    params: p.params,
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
