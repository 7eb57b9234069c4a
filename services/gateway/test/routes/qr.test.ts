import { ProblemError } from "@c402/problems";
import { Resvg } from "@resvg/resvg-js";
import jsQR from "jsqr";
import { BASE_URL, CHECKOUT_ID, getCheckout, recorded, servers, bodyOf } from "../support/fake-gateway";

/** GET /c/{id}/qr.svg and /c/{id}/test/qr.svg (routes/qr.ts): decoded back with a real SVG renderer and QR reader. */

const serve = servers();
const NONCE = "qr-handoff-nonce-0001";

/** What a phone's camera reads from the SVG: rendered by resvg, decoded by jsQR. */
function decoded(svg: string): string | undefined {
  const image = new Resvg(svg, { fitTo: { mode: "width", value: 400 }, background: "white" }).render();
  return jsQR(new Uint8ClampedArray(image.pixels), image.width, image.height)?.data;
}

describe("the QR code of a face", () => {
  it.each([
    ["live", `/c/${CHECKOUT_ID}/qr.svg`, `${BASE_URL}/c/${CHECKOUT_ID}`],
    ["test", `/c/${CHECKOUT_ID}/test/qr.svg`, `${BASE_URL}/c/${CHECKOUT_ID}/test`],
  ])("the %s face: an SVG that decodes to the face URL, cached a day", async (_face, path, faceUrl) => {
    const { fakes, called } = recorded({ catalog: { getCheckout: getCheckout() } });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}${path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/svg+xml; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(decoded(await res.text())).toBe(faceUrl);
    expect(called()).toEqual(["catalog.getCheckout"]);
  });

  it("with h: the code carries the handoff nonce, and the answer is not stored", async () => {
    const { fakes } = recorded({ catalog: { getCheckout: getCheckout() } });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}/test/qr.svg?h=${NONCE}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(decoded(await res.text())).toBe(`${BASE_URL}/c/${CHECKOUT_ID}/test?h=${NONCE}`);
  });

  it.each([["short"], ["has spaces in it, which no nonce has"], ["x".repeat(65)]])("422 naming h for a malformed nonce (%s), before any lookup", async (h) => {
    const { fakes, called } = recorded({ catalog: { getCheckout: getCheckout() } });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}/qr.svg?h=${encodeURIComponent(h)}`);
    expect(res.status).toBe(422);
    expect(await bodyOf(res)).toMatchObject({ errors: [{ field: "h" }] });
    expect(called()).toEqual([]);
  });

  it("404 for a checkout that does not exist, and for anything that is not a checkout id", async () => {
    const { fakes } = recorded({
      catalog: {
        getCheckout: async () => {
          throw new ProblemError("not-found", "No such checkout.");
        },
      },
    });
    const { url } = await serve.app(fakes);
    expect((await fetch(`${url}/c/${CHECKOUT_ID}/qr.svg`)).status).toBe(404);
    expect((await fetch(`${url}/c/pay_000000000000000000000000/qr.svg`)).status).toBe(404);
  });
});
