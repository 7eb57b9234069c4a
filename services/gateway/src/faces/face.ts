import { paymentsV1 } from "@c402/contracts";

/** The two faces of a checkout: `/c/{id}` (live once armed) and `/c/{id}/test` (always a rehearsal). */
export type Face = "live" | "test";

/** The face as payments names it on the wire. */
export const FACE_PROTO: Record<Face, paymentsV1.Face> = { live: paymentsV1.Face.LIVE, test: paymentsV1.Face.TEST };

/** Which x402 body a buyer asked for (the PAYMENT-REQUIRED header is always v2). */
export type WireVersion = 1 | 2;
