import type { PayPageData } from "../page-data";
import type { BrowserEventDetail, BrowserEventType } from "./protocol";

/**
 * The page's side of an embed: when framed by a host the account allowlisted
 * (its origin in the fragment's `host` and in frame_origins), the options the
 * embed script passed in the fragment (part, theme, accent, radius, font) and
 * the events told to that exact origin.
 */
export interface HostBridge {
  /** Framed by an allowlisted host that asked for events. */
  readonly framed: boolean;
  /** The one part to show (data-svc-part), or null for the whole page. */
  readonly part: string | null;
  tell(type: BrowserEventType, detail: BrowserEventDetail): void;
  /** A sibling part of the same checkout was paid on the host page. */
  onSiblingPaid(show: (detail: BrowserEventDetail) => void): void;
}

export function connectHost(_data: PayPageData): HostBridge {
  return { framed: false, part: null, tell: () => undefined, onSiblingPaid: () => undefined };
}
