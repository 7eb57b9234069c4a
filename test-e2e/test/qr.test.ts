import { Resvg } from "@resvg/resvg-js";
import jsQR from "jsqr";
import { newEscrowCheckout } from "../src/escrow";
import { baseUrl, call, newCheckout, newSeller } from "../src/http";

/** GET /c/{id}/qr.svg and /c/{id}/test/qr.svg: what a phone's camera reads is the face URL (rendered by resvg, read by jsQR). */

function scanned(svg: string): string | undefined {
  const image = new Resvg(svg, { fitTo: { mode: "width", value: 400 }, background: "white" }).render();
  return jsQR(new Uint8ClampedArray(image.pixels), image.width, image.height)?.data;
}

describe("QR codes of the faces", () => {
  it("encode the face URLs (the handoff nonce too when given), cached a day without one and not stored with one", async () => {
    const s = await newSeller();
    const c = await newCheckout(s.key);
    const live = await call("GET", `/c/${c.id}/qr.svg`, { headers: { accept: "image/svg+xml" } });
    expect(live.status).toBe(200);
    expect(live.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    expect(live.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(scanned(live.text)).toBe(c.url);

    const nonce = "e2e-qr-handoff-0001";
    const test = await call("GET", `/c/${c.id}/test/qr.svg?h=${nonce}`, { headers: { accept: "image/svg+xml" } });
    expect(test.status).toBe(200);
    expect(test.headers.get("cache-control")).toBe("no-store");
    expect(scanned(test.text)).toBe(`${c.test_url}?h=${nonce}`);
  });

  it("an escrow checkout's codes encode its /e/ faces", async () => {
    const s = await newSeller();
    const e = { body: await newEscrowCheckout(s.key) };
    const live = await call("GET", `/e/${e.body.id}/qr.svg`, { headers: { accept: "image/svg+xml" } });
    expect(live.status).toBe(200);
    expect(scanned(live.text)).toBe(`${baseUrl()}/e/${e.body.id}`);
    const test = await call("GET", `/e/${e.body.id}/test/qr.svg?h=e2e-qr-handoff-0002`, { headers: { accept: "image/svg+xml" } });
    expect(test.headers.get("cache-control")).toBe("no-store");
    expect(scanned(test.text)).toBe(`${baseUrl()}/e/${e.body.id}/test?h=e2e-qr-handoff-0002`);
    expect((await call("GET", "/e/esc_000000000000000000000000/qr.svg")).status).toBe(404);
    // An escrow checkout is not a /c/ face, nor a /c/ checkout an /e/ one.
    expect((await call("GET", `/c/${e.body.id}/qr.svg`)).status).toBe(404);
    expect((await call("GET", `/e/${(await newCheckout(s.key)).id}/qr.svg`)).status).toBe(404);
  });

  it("404 for an unknown checkout, 422 for a malformed nonce", async () => {
    expect((await call("GET", "/c/chk_000000000000000000000000/qr.svg")).status).toBe(404);
    const s = await newSeller();
    const c = await newCheckout(s.key);
    const bad = await call("GET", `/c/${c.id}/qr.svg?h=no`);
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: "h" })]);
  });
});
