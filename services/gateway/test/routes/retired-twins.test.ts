import { create } from "@bufbuild/protobuf";
import { catalogV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import { recorded, servers } from "../support/fake-gateway";

/**
 * Spec, Payment rules 6: a test twin of the retired twin-row model answers
 * 307 to its live checkout's rehearsal face, keeping the method, body and
 * query; catalog is asked only for an id nothing else knows; a package key
 * bought on the twin row is answered on that row, never redirected.
 */

const serve = servers();
const TWIN = "chk_RetiredTwin0000000000000";
const LIVE = "chk_LiveCheckout000000000000";
const UNKNOWN = "chk_Unknown00000000000000000";
const notFound = () => Promise.reject(new ProblemError("not-found", "No such checkout."));

function fakes() {
  return recorded({
    catalog: {
      getCheckout: notFound,
      resolveRetiredTwin: async (req) => create(catalogV1.ResolveRetiredTwinResponseSchema, req.checkoutId === TWIN ? { liveId: LIVE } : {}),
    },
    payments: { quotePayment: notFound, preparePayment: notFound, findHandoff: notFound },
    // The twin row's package answers for itself (here: a key it does not know).
    fulfillment: { spendPackageCall: () => Promise.reject(new ProblemError("unauthenticated", "Not a key of this checkout.")) },
  });
}

describe("retired test twins", () => {
  it.each([
    ["GET", `/c/${TWIN}`, `/c/${LIVE}/test`],
    ["GET", `/c/${TWIN}?city=Paris&x402_version=1`, `/c/${LIVE}/test?city=Paris&x402_version=1`],
    ["POST", `/c/${TWIN}/pay`, `/c/${LIVE}/test/pay`],
    ["POST", `/c/${TWIN}/prepare`, `/c/${LIVE}/test/prepare`],
    ["GET", `/c/${TWIN}/qr.svg`, `/c/${LIVE}/test/qr.svg`],
    ["GET", `/c/${TWIN}/handoff/nonce0123456789abcdefgh`, `/c/${LIVE}/handoff/nonce0123456789abcdefgh`],
  ])("%s %s answers 307 to %s", async (method, path, location) => {
    const f = fakes();
    const app = await serve.app(f.fakes);
    const body = path.endsWith("/prepare") ? JSON.stringify({ payer: "0x2222222222222222222222222222222222222222" }) : method === "POST" ? "{}" : undefined;
    const r = await fetch(`${app.url}${path}`, { method, redirect: "manual", headers: { "content-type": "application/json" }, ...(body ? { body } : {}) });
    expect(r.status).toBe(307);
    expect(r.headers.get("location")).toBe(location);
    expect(f.of("resolveRetiredTwin")).toEqual([expect.objectContaining({ checkoutId: TWIN })]);
  });

  it("an id that is no twin keeps its 404, and a path that names no checkout id never asks catalog about twins", async () => {
    const f = fakes();
    const app = await serve.app(f.fakes);
    const r = await fetch(`${app.url}/c/${UNKNOWN}`, { redirect: "manual" });
    expect(r.status).toBe(404);
    expect(r.headers.get("location")).toBeNull();
    expect(f.of("resolveRetiredTwin")).toHaveLength(1);
    const unknownShape = await fetch(`${app.url}/c/not-a-checkout-id`, { redirect: "manual" });
    expect(unknownShape.status).toBe(404);
    expect(f.of("resolveRetiredTwin")).toHaveLength(1);
  });

  it("a package key bought on the twin row is answered there: no redirect, no question to catalog", async () => {
    const f = fakes();
    const app = await serve.app(f.fakes);
    const r = await fetch(`${app.url}/c/${TWIN}?q=1`, { redirect: "manual", headers: { authorization: `Bearer pk_live_${"a".repeat(32)}` } });
    expect(r.status).toBe(401);
    expect(f.of("spendPackageCall")).toEqual([expect.objectContaining({ checkoutId: TWIN })]);
    expect(f.of("resolveRetiredTwin")).toEqual([]);
  });
});
