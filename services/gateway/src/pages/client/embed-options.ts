/**
 * The embed options the embed script passes to the framed page in its URL
 * fragment (`#svc=1&host=<origin>&part=…&theme=…&accent=…&radius=…&font=…&format=…`;
 * pages/README.md, "Embeds"). A fragment never reaches the server, so the
 * options cost no request of their own and never enter a log.
 */
export const EMBED_FRAGMENT = {
  /** `svc=1` marks a fragment as an embed's. */
  marker: "svc",
  /** What data-svc-part may show: pay (price, wallet and QR), or one section. */
  parts: ["pay", "wallet", "qr", "agent", "price"],
  themes: ["light", "dark", "auto"],
  /** Largest corner radius in CSS pixels (data-svc-radius 0 to 32). */
  maxRadius: 32,
} as const;

export type EmbedPart = (typeof EMBED_FRAGMENT.parts)[number];
