/** /static/embed.js: mounts the checkouts named by `data-svc` elements on a seller's page (spec, Embedding; pages/README.md, "Embeds"). */
import { EMBED_FRAGMENT } from "./embed-options";
import { BROWSER_EVENTS, isFrameMessage, MESSAGE_NAMESPACE, MESSAGE_VERSION, type BrowserEventDetail, type HostMessage } from "./protocol";

/** The face of each id prefix; a pay_ id (data-svc-receipt) frames its receipt. */
const FACES: Record<string, string> = { chk: "c", esc: "e", cnt: "x", pay: "r" };
const ID = /^(chk|esc|cnt|pay)_[0-9A-Za-z]{24}$/;
/** A pass as the service mints it: URL-safe text. */
const GRANT = /^[A-Za-z0-9._~-]{8,2048}$/;
const HEIGHT_DEFAULT = 480;
const HEIGHT_MAX = 10_000;
/** How long a loaded frame may stay silent before the script asks /embed/check why. */
const SILENT_MS = 4_000;

interface Mount {
  element: HTMLElement;
  /** The checkout (or article) id; for a receipt mount, the pay_ id. */
  id: string;
  frame: HTMLIFrameElement | null;
  fixedHeight: boolean;
  media: HTMLImageElement | null;
}

const script = (document.currentScript as HTMLScriptElement | null) ?? document.querySelector<HTMLScriptElement>('script[src*="/static/embed.js"]');
const serviceOrigin = script ? new URL(script.src, window.location.href).origin : null;
const mounts: Mount[] = [];
const mounted = new WeakSet<Element>();

const attr = (el: Element, name: string) => el.getAttribute(`data-svc-${name}`)?.trim() ?? null;
const flag = (el: Element, name: string) => attr(el, name) === "true";
/** An integer attribute within [min, max], else null (a bad value is ignored). */
function whole(el: Element, name: string, min: number, max: number): number | null {
  const v = attr(el, name);
  return v !== null && /^[0-9]{1,5}$/.test(v) && Number(v) >= min && Number(v) <= max ? Number(v) : null;
}
function oneOf<T extends string>(el: Element, name: string, allowed: readonly T[]): T | null {
  const v = attr(el, name);
  return v !== null && (allowed as readonly string[]).includes(v) ? (v as T) : null;
}
/** Short host-page text (label, blurb, kind): shown with textContent only. */
function text(el: Element, name: string, max: number): string | null {
  const v = attr(el, name);
  return v ? v.slice(0, max) : null;
}
function warn(message: string): void {
  console.warn(`c402 embed: ${message}`);
}

function mountAll(): void {
  if (!serviceOrigin) return;
  document.querySelectorAll<HTMLElement>("[data-svc], [data-svc-receipt]").forEach((el) => {
    if (mounted.has(el)) return;
    mounted.add(el);
    mount(el, serviceOrigin);
  });
}

function mount(el: HTMLElement, origin: string): void {
  const receipt = el.getAttribute("data-svc-receipt");
  const id = (receipt ?? el.getAttribute("data-svc") ?? "").trim();
  const match = ID.exec(id);
  if (!match || (receipt !== null) !== (match[1] === "pay")) return warn(`"${id}" is not a ${receipt !== null ? "pay_ id" : "checkout id"}; nothing mounted`);
  const prefix = match[1] as string;
  if (flag(el, "content") && prefix !== "cnt") warn(`data-svc-content is for gated articles (cnt_…); ${id} is mounted as what it is`);
  const kind = text(el, "kind", 24);
  const price = attr(el, "price");
  const shownPrice = price && /^[0-9]{1,7}(\.[0-9]{1,6})?$/.test(price) ? `$${price}` : null;
  const grant = prefix === "cnt" ? attr(el, "grant") : null;
  const test = prefix !== "pay" && flag(el, "test");
  let url = `${origin}/${FACES[prefix]}/${id}${test ? "/test" : ""}`;

  if (attr(el, "mode") === "button") {
    // A link to the face in a new tab: nothing framed, so no allowlist and no wallet_button needed.
    const link = document.createElement("a");
    link.href = url;
    link.target = "_blank";
    link.rel = "noopener";
    link.className = "svc-embed-button";
    const label = text(el, "label", 80) ?? (prefix === "cnt" ? `Unlock the ${kind ?? "article"}` : prefix === "pay" ? "Receipt" : "Buy");
    link.textContent = shownPrice ? `${label} · ${shownPrice}` : label;
    el.replaceChildren(link);
    mounts.push({ element: el, id, frame: null, fixedHeight: true, media: null });
    return;
  }

  const children: HTMLElement[] = [];
  let media: HTMLImageElement | null = null;
  const mediaUrl = prefix === "cnt" ? attr(el, "media") : null;
  if (mediaUrl) {
    // A teaser image, blurred until the reader is through (data-svc-blur pixels; 8 by default).
    const src = safeUrl(mediaUrl);
    if (src) {
      media = document.createElement("img");
      media.src = src;
      media.alt = `Preview of the ${kind ?? "article"}`;
      media.className = "svc-embed-media";
      media.style.maxWidth = "100%";
      media.style.filter = `blur(${whole(el, "blur", 0, 40) ?? 8}px)`;
      children.push(media);
    } else warn(`data-svc-media "${mediaUrl}" is not an http(s) URL; ignored`);
  }
  const blurb = text(el, "blurb", 500);
  if (blurb) children.push(paragraph("svc-embed-blurb", blurb));
  // The price as the seller shows it on its page; the frame always shows the service's own.
  if (shownPrice) children.push(paragraph("svc-embed-price", prefix === "cnt" ? `Unlock the ${kind ?? "article"}: ${shownPrice}` : `Price: ${shownPrice}`));

  if (grant) {
    if (GRANT.test(grant)) {
      url += `?grant=${encodeURIComponent(grant)}`;
      el.setAttribute("data-svc-open", "true");
    } else warn("data-svc-grant is not a pass; ignored");
  }
  const options = new URLSearchParams({ [EMBED_FRAGMENT.marker]: "1", host: window.location.origin });
  const part = oneOf(el, "part", EMBED_FRAGMENT.parts);
  if (part) options.set("part", part);
  const theme = oneOf(el, "theme", EMBED_FRAGMENT.themes);
  if (theme && theme !== "auto") options.set("theme", theme);
  const accent = attr(el, "accent");
  if (accent && /^#[0-9a-fA-F]{6}$/.test(accent)) options.set("accent", accent.slice(1).toLowerCase());
  const radius = whole(el, "radius", 0, EMBED_FRAGMENT.maxRadius);
  if (radius !== null) options.set("radius", String(radius));
  if (attr(el, "font") === "system") options.set("font", "system");
  if (attr(el, "format") === "flat") options.set("format", "flat");

  const frame = document.createElement("iframe");
  const height = whole(el, "height", 40, HEIGHT_MAX);
  frame.src = prefix === "pay" ? url : `${url}#${options.toString()}`;
  frame.title = text(el, "label", 80) ?? (prefix === "pay" ? "Receipt" : prefix === "cnt" ? `Paywall: ${kind ?? "article"}` : "Checkout");
  frame.style.width = "100%";
  frame.style.border = "0";
  frame.style.display = "block";
  frame.style.height = `${height ?? HEIGHT_DEFAULT}px`;
  children.push(frame);
  el.replaceChildren(...children);
  const m: Mount = { element: el, id, frame, fixedHeight: height !== null, media };
  mounts.push(m);
  if (media && el.getAttribute("data-svc-open") === "true") media.style.filter = "none";
  if (prefix !== "pay") frame.addEventListener("load", () => setTimeout(() => void diagnose(m, origin), SILENT_MS), { once: true });
}

function paragraph(className: string, content: string): HTMLParagraphElement {
  const p = document.createElement("p");
  p.className = className;
  p.textContent = content;
  return p;
}

/** An absolute http(s) URL of the media, or null: nothing else becomes an image source. */
function safeUrl(value: string): string | null {
  try {
    const u = new URL(value, document.baseURI);
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;
  } catch {
    return null;
  }
}

/** A frame that never said it was ready: ask the service why, for the seller's console. */
async function diagnose(m: Mount, origin: string): Promise<void> {
  if (m.element.hasAttribute("data-svc-ready") || m.element.getAttribute("data-svc-open") === "true") return;
  const query = new URLSearchParams({ checkout_id: m.id, origin: window.location.origin });
  const answer = await fetch(`${origin}/embed/check?${query.toString()}`)
    .then((r) => r.json() as Promise<{ framing_allowed?: boolean; message?: string; detail?: string }>)
    .catch(() => null);
  if (answer && answer.framing_allowed !== true) warn(answer.message ?? answer.detail ?? "the checkout cannot be framed here");
}

function onMessage(event: MessageEvent): void {
  if (event.origin !== serviceOrigin || !isFrameMessage(event.data)) return;
  const m = mounts.find((x) => x.frame !== null && x.frame.contentWindow === event.source);
  const message = event.data;
  if (!m || !(BROWSER_EVENTS as readonly string[]).includes(message.type) || message.detail.checkout_id !== m.id) return;
  const detail: BrowserEventDetail = { ...message.detail };
  if (message.type === "ready") m.element.setAttribute("data-svc-ready", "true");
  if (message.type === "resize" && !m.fixedHeight && m.frame && typeof detail.height === "number" && detail.height > 0) {
    m.frame.style.height = `${Math.min(Math.ceil(detail.height), HEIGHT_MAX)}px`;
  }
  if (message.type === "paid") paid(m, detail);
  m.element.dispatchEvent(new CustomEvent(`svc:${message.type}`, { bubbles: true, detail }));
}

/** Every part of the checkout shows paid; an article's reader is through. */
function paid(from: Mount, detail: BrowserEventDetail): void {
  const sibling: HostMessage = { ns: MESSAGE_NAMESPACE, v: MESSAGE_VERSION, type: "sibling_paid", detail };
  for (const m of mounts.filter((x) => x.id === from.id)) {
    m.element.setAttribute("data-svc-paid", "true");
    if (m.id.startsWith("cnt_")) {
      m.element.setAttribute("data-svc-open", "true");
      if (m.media) m.media.style.filter = "none";
      // The frame becomes the article, which reports no size: give it room to read.
      if (m.frame && !m.fixedHeight) m.frame.style.height = `${Math.max(m.frame.offsetHeight, HEIGHT_DEFAULT)}px`;
    }
    if (m !== from && m.frame?.contentWindow && serviceOrigin) m.frame.contentWindow.postMessage(sibling, serviceOrigin);
  }
}

if (serviceOrigin) {
  window.addEventListener("message", onMessage);
  mountAll();
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
}
