/**
 * The messages between a framed pay page and the embed script on the host
 * page (docs/decisions.md, "Browser events"). Every message carries the
 * namespace and version; the receiver checks `event.origin` by strict
 * equality before reading anything else, and the sender names the exact
 * target origin, never "*".
 */
export const MESSAGE_NAMESPACE = "c402";
export const MESSAGE_VERSION = 1;

/** The spec's browser events, dispatched on the host as `svc:<type>`. */
export const BROWSER_EVENTS = ["ready", "paid", "held", "on_hold", "released", "escalated", "resize"] as const;
export type BrowserEventType = (typeof BROWSER_EVENTS)[number];

export interface BrowserEventDetail {
  checkout_id: string;
  /** The pay_ id of the payment (paid, held …). */
  payment_id?: string;
  receipt_url?: string;
  test_mode?: boolean;
  network?: string;
  /** A gated article's pass (paid on an /x face): the host may keep it and pass it back as data-svc-grant. */
  grant?: string;
  /** resize: the page's content height in CSS pixels. */
  height?: number;
}

/** A frame → host message. */
export interface FrameMessage {
  ns: typeof MESSAGE_NAMESPACE;
  v: typeof MESSAGE_VERSION;
  type: BrowserEventType;
  detail: BrowserEventDetail;
}

/** A host → frame message: a sibling part of the same checkout was paid, so this one shows paid too. */
export interface HostMessage {
  ns: typeof MESSAGE_NAMESPACE;
  v: typeof MESSAGE_VERSION;
  type: "sibling_paid";
  detail: BrowserEventDetail;
}

export function isFrameMessage(data: unknown): data is FrameMessage {
  const m = data as Partial<FrameMessage> | null;
  return (
    typeof m === "object" && m !== null && m.ns === MESSAGE_NAMESPACE && m.v === MESSAGE_VERSION && typeof m.type === "string" && typeof m.detail === "object"
  );
}

export function isHostMessage(data: unknown): data is HostMessage {
  const m = data as Partial<HostMessage> | null;
  return (
    typeof m === "object" && m !== null && m.ns === MESSAGE_NAMESPACE && m.v === MESSAGE_VERSION && m.type === "sibling_paid" && typeof m.detail === "object"
  );
}
