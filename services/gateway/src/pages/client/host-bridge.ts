import type { PayPageData } from "../page-data";
import { EMBED_FRAGMENT } from "./embed-options";
import { isHostMessage, MESSAGE_NAMESPACE, MESSAGE_VERSION, type BrowserEventDetail, type BrowserEventType, type FrameMessage } from "./protocol";

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

const NOT_FRAMED: HostBridge = { framed: false, part: null, tell: () => undefined, onSiblingPaid: () => undefined };

/** The embed options the fragment may carry (README "Embeds"); anything else in it is ignored. */
export interface EmbedOptions {
  host: string;
  part: string | null;
  theme: "light" | "dark" | null;
  accent: string | null;
  radius: number | null;
  font: "system" | null;
  format: "flat" | null;
}

/** The options of `#svc=1&host=…&part=…`, each checked; null when the fragment is no embed's. */
export function embedOptionsOf(hash: string): EmbedOptions | null {
  const q = new URLSearchParams(hash.replace(/^#/, ""));
  const host = q.get(EMBED_FRAGMENT.marker) === "1" ? q.get("host") : null;
  if (!host) return null;
  const part = q.get("part");
  const theme = q.get("theme");
  const accent = q.get("accent");
  const radius = q.get("radius");
  return {
    host,
    part: part !== null && (EMBED_FRAGMENT.parts as readonly string[]).includes(part) ? part : null,
    theme: theme === "light" || theme === "dark" ? theme : null,
    accent: accent !== null && /^[0-9a-fA-F]{6}$/.test(accent) ? `#${accent.toLowerCase()}` : null,
    radius: radius !== null && /^[0-9]{1,2}$/.test(radius) && Number(radius) <= EMBED_FRAGMENT.maxRadius ? Number(radius) : null,
    font: q.get("font") === "system" ? "system" : null,
    format: q.get("format") === "flat" ? "flat" : null,
  };
}

/**
 * Connects the page to the host that framed it, or to nothing: the page must
 * be framed, the fragment must name the host, and the host must be strictly
 * one of the origins allowed to frame the page (the browser already refused
 * any other by frame-ancestors; this keeps events from ever going elsewhere).
 */
export function connectHost(data: PayPageData): HostBridge {
  if (window.parent === window) return NOT_FRAMED;
  const options = embedOptionsOf(window.location.hash);
  if (!options || !data.frame_origins.includes(options.host)) return NOT_FRAMED;
  const host = options.host;
  // Where the browser names the frame's ancestors, the direct parent must be that host.
  const ancestors = window.location.ancestorOrigins;
  if (ancestors && ancestors.length > 0 && ancestors[0] !== host) return NOT_FRAMED;

  applyOptions(options);
  const tell = (type: BrowserEventType, detail: BrowserEventDetail) => {
    const message: FrameMessage = { ns: MESSAGE_NAMESPACE, v: MESSAGE_VERSION, type, detail };
    window.parent.postMessage(message, host);
  };
  reportSize(data.checkout_id, tell);
  return {
    framed: true,
    part: options.part,
    tell,
    onSiblingPaid(show) {
      window.addEventListener("message", (event: MessageEvent) => {
        if (event.origin !== host || event.source !== window.parent || !isHostMessage(event.data)) return;
        if (event.data.detail.checkout_id !== data.checkout_id) return;
        show(event.data.detail);
      });
    },
  };
}

/** Marks the root for frame.css and sets the host's look through the CSSOM (the page's policy allows no style attribute in markup). */
function applyOptions(o: EmbedOptions): void {
  const root = document.documentElement;
  root.dataset.embedded = "true";
  if (o.part) root.dataset.part = o.part;
  if (o.theme) root.dataset.theme = o.theme;
  if (o.format) root.dataset.format = o.format;
  // "system": the platform's own interface font, whatever the page's default becomes.
  if (o.font) root.style.setProperty("--svc-font", SYSTEM_FONT);
  if (o.radius !== null) root.style.setProperty("--svc-radius", `${o.radius}px`);
  if (o.accent) {
    const accent = o.accent;
    root.style.setProperty("--svc-accent", accent);
    root.style.setProperty("--svc-accent-text", readableTextOn(accent));
    // Links are accent text on the page's background: the accent where it reads at 4.5:1, the theme's own link colour where it does not.
    root.style.setProperty("--svc-link-light", contrast(accent, LIGHT_BACKGROUND) >= AA_TEXT ? accent : LIGHT_LINK);
    root.style.setProperty("--svc-link-dark", contrast(accent, DARK_BACKGROUND) >= AA_TEXT ? accent : DARK_LINK);
    root.dataset.accent = "custom";
  }
}

/** Tells the host the page's height whenever it changes, so the frame can follow it. */
function reportSize(checkoutId: string, tell: (type: BrowserEventType, detail: BrowserEventDetail) => void): void {
  if (typeof ResizeObserver === "undefined") return;
  let last = -1;
  const measure = () => {
    const height = Math.ceil(document.body.getBoundingClientRect().height);
    if (height === last || height === 0) return;
    last = height;
    tell("resize", { checkout_id: checkoutId, height });
  };
  new ResizeObserver(measure).observe(document.body);
}

const SYSTEM_FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
// pages.css's themes: the backgrounds links sit on, and the links used when an accent would not read on them.
const LIGHT_BACKGROUND = "#ffffff";
const DARK_BACKGROUND = "#0b1220";
const LIGHT_LINK = "#1d4ed8";
const DARK_LINK = "#93c5fd";
/** WCAG 2.1 AA for normal text. */
const AA_TEXT = 4.5;

/** Black or white, whichever reads better on `background` (one of them always reaches 4.5:1). */
export function readableTextOn(background: string): "#000000" | "#ffffff" {
  return contrast(background, "#000000") >= contrast(background, "#ffffff") ? "#000000" : "#ffffff";
}

/** The WCAG contrast ratio of two #rrggbb colours. */
export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** WCAG relative luminance of #rrggbb. */
function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = Number.parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
}
