import { getAddress } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { call, newCheckout, newSeller, type Reply } from "../src/http";

/** What a list shows of a checkout: the read-back minus the goods and the offer card. */
const SUMMARY_FIELDS = [
  "id",
  "object",
  "url",
  "test_url",
  "status",
  "title",
  "description",
  "price_usd",
  "pay_to",
  "payouts",
  "fulfillment",
  "max_deliveries",
  "package_ttl_days",
  "escrow",
  "escrow_twin",
  "schedule",
  "reusable",
  "test_mode",
  "created_at",
  "expires_at",
  "armed_at",
  "test",
].sort();
const OFFER_CARD_FIELDS = ["input_schema", "output_schema", "example_input", "example_output", "freshness", "coverage", "source", "constraints"];

interface Listed {
  id: string;
  created_at: string;
}

/** Follows next_cursor from the first page to the last; returns every page's reply. */
async function walk(path: string, key: string, limit: number): Promise<Reply[]> {
  const pages: Reply[] = [];
  let cursor: string | null = null;
  do {
    const r = await call("GET", `${path}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { key });
    expect(r.status).toBe(200);
    pages.push(r);
    cursor = r.body.next_cursor as string | null;
    if (pages.length > 20) throw new Error("pagination does not end");
  } while (cursor !== null);
  return pages;
}

/** Newest first: created_at never increases, and items created at distinct instants are in reverse creation order. */
function expectNewestFirst(listed: Listed[], createdInOrder: string[]) {
  const time = (i: Listed) => new Date(i.created_at).getTime();
  for (let i = 1; i < listed.length; i++) {
    const [newer, older] = [listed[i - 1]!, listed[i]!];
    expect(time(newer)).toBeGreaterThanOrEqual(time(older));
    if (time(newer) > time(older)) expect(createdInOrder.indexOf(newer.id)).toBeGreaterThan(createdInOrder.indexOf(older.id));
  }
}

/** Signs in with the wallet again (an existing account). */
async function signInAgain(wallet: PrivateKeyAccount): Promise<Reply> {
  const challenge = await call("POST", "/auth/wallet/challenge", { body: { address: wallet.address, network: "eip155:8453" } });
  const signature = await wallet.signMessage({ message: challenge.body.message });
  const verified = await call("POST", "/auth/wallet/verify", { body: { message: challenge.body.message, signature } });
  expect(verified.status).toBe(200);
  return verified;
}

/**
 * A live key of the seller's account. Where a later sign-in opens a session,
 * the session mints it (a test key may not mint a live key there); otherwise
 * the sign-in key does.
 */
async function liveKeyOf(seller: Awaited<ReturnType<typeof newSeller>>): Promise<string> {
  const again = await signInAgain(seller.wallet);
  const minter = (again.body.session?.token as string | undefined) ?? seller.key;
  const r = await call("POST", "/v1/keys", { key: minter, body: { mode: "live", scope: "full" } });
  expect(r.status).toBe(201);
  expect(r.body.secret).toMatch(/^sk_live_/);
  return r.body.secret as string;
}

describe("GET /v1/checkouts pages", () => {
  let seller: Awaited<ReturnType<typeof newSeller>>;
  const created: Record<string, unknown>[] = [];

  beforeAll(async () => {
    seller = await newSeller();
    for (let i = 0; i < 7; i++) {
      created.push(
        await newCheckout(seller.key, {
          title: `Report ${i}`,
          description: i % 2 ? `About ${i}` : null,
          price_usd: `0.${i + 1}0`,
          reusable: i % 2 === 0,
          payload: { big: "x".repeat(1000), i },
          input_schema: { type: "object" },
          freshness: "hourly",
        }),
      );
    }
  });

  it("walks every page exactly once: limit 3 gives 3 + 3 + 1, newest first", async () => {
    const pages = await walk("/v1/checkouts", seller.key, 3);
    expect(pages.map((p) => p.body.checkouts.length)).toEqual([3, 3, 1]);
    expect(pages.map((p) => p.body.has_more)).toEqual([true, true, false]);
    expect(pages.map((p) => typeof p.body.next_cursor)).toEqual(["string", "string", "object"]);
    expect(pages[2]!.body.next_cursor).toBeNull();

    const listed = pages.flatMap((p) => p.body.checkouts as Listed[]);
    const ids = listed.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(created.map((c) => c.id as string).sort());
    expectNewestFirst(
      listed,
      created.map((c) => c.id as string),
    );
  });

  it("without limit answers a short list whole, in the order of the walk", async () => {
    const r = await call("GET", "/v1/checkouts", { key: seller.key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ has_more: false, next_cursor: null });
    const walked = (await walk("/v1/checkouts", seller.key, 2)).flatMap((p) => p.body.checkouts as Listed[]);
    expect(r.body.checkouts.map((c: Listed) => c.id)).toEqual(walked.map((c) => c.id));
  });

  it("the default page holds 50", async () => {
    const busy = await newSeller();
    for (let i = 0; i < 51; i++) await newCheckout(busy.key, { title: `n${i}` });
    const first = await call("GET", "/v1/checkouts", { key: busy.key });
    expect(first.body.checkouts).toHaveLength(50);
    expect(first.body.has_more).toBe(true);
    const rest = await call("GET", `/v1/checkouts?cursor=${first.body.next_cursor as string}`, { key: busy.key });
    expect(rest.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(rest.body.checkouts.map((c: Listed & { title: string }) => c.title)).toEqual(["n0"]);
  });

  it("keeps include_voided with pages", async () => {
    const r = await call("GET", "/v1/checkouts?include_voided=true&limit=2", { key: seller.key });
    expect(r.status).toBe(200);
    expect(r.body.checkouts).toHaveLength(2);
    expect(r.body.has_more).toBe(true);
  });

  it("lists summaries without goods or offer card; GET by id keeps both", async () => {
    const r = await call("GET", "/v1/checkouts?limit=200", { key: seller.key });
    for (const item of r.body.checkouts as Record<string, unknown>[]) {
      expect(Object.keys(item).sort()).toEqual(SUMMARY_FIELDS);
      const original = created.find((c) => c.id === item.id)!;
      // The summary says what create accepted.
      for (const field of SUMMARY_FIELDS) expect({ field, value: item[field] }).toEqual({ field, value: original[field] });
    }
    expect(r.text).not.toContain("x".repeat(1000));

    const one = await call("GET", `/v1/checkouts/${created[0]!.id as string}`, { key: seller.key });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ payload: { big: "x".repeat(1000), i: 0 }, input_schema: { type: "object" }, freshness: "hourly" });
    for (const field of ["payload", ...OFFER_CARD_FIELDS]) expect(one.body).toHaveProperty(field);
  });

  it("a cursor taken from another seller's list still shows only the caller's checkouts", async () => {
    const [first] = await walk("/v1/checkouts", seller.key, 6);
    const other = await newSeller();
    const mine = await newCheckout(other.key);
    const r = await call("GET", `/v1/checkouts?limit=5&cursor=${first!.body.next_cursor as string}`, { key: other.key });
    expect(r.status).toBe(200);
    expect(r.body.checkouts.map((c: Listed) => c.id)).not.toContain(created[0]!.id);
    expect(r.body.checkouts.every((c: Listed) => c.id === mine.id)).toBe(true);
  });
});

describe("list parameters", () => {
  let key: string;
  beforeAll(async () => {
    key = (await newSeller()).key;
  });

  it.each(["/v1/checkouts", "/v1/keys"])("%s refuses a limit outside 1..200 or not an integer with 422 naming limit", async (path) => {
    for (const limit of ["0", "201", "abc", "1.5", "-1", ""]) {
      const r = await call("GET", `${path}?limit=${limit}`, { key });
      expect({ limit, status: r.status }).toEqual({ limit, status: 422 });
      expect(r.body.type).toMatch(/\/problems\/invalid-request$/);
      expect(r.body.errors).toEqual([expect.objectContaining({ field: "limit" })]);
    }
    expect((await call("GET", `${path}?limit=1`, { key })).status).toBe(200);
    expect((await call("GET", `${path}?limit=200`, { key })).status).toBe(200);
  });

  it.each(["/v1/checkouts", "/v1/keys"])("%s refuses a cursor it did not issue with 422 naming cursor", async (path) => {
    const forged = Buffer.from(JSON.stringify(["not a date", "chk_x"])).toString("base64url");
    for (const cursor of ["garbage!", "AAAAAAAAAAAA", forged, ""]) {
      const r = await call("GET", `${path}?cursor=${encodeURIComponent(cursor)}`, { key });
      expect({ cursor, status: r.status }).toEqual({ cursor, status: 422 });
      expect(r.body.errors).toEqual([expect.objectContaining({ field: "cursor" })]);
    }
  });
});

describe("GET /v1/keys pages", () => {
  it("walks every key exactly once, newest first, prefixes only", async () => {
    const seller = await newSeller();
    const minted: string[] = [];
    for (let i = 0; i < 4; i++) {
      const k = await call("POST", "/v1/keys", { key: seller.key, body: { name: `k${i}`, scope: "read_only" } });
      expect(k.status).toBe(201);
      minted.push(k.body.id as string);
    }
    const pages = await walk("/v1/keys", seller.key, 2);
    expect(pages.map((p) => p.body.keys.length)).toEqual([2, 2, 1]);
    expect(pages.map((p) => p.body.has_more)).toEqual([true, true, false]);
    expect(pages[2]!.body.next_cursor).toBeNull();
    const listed = pages.flatMap((p) => p.body.keys as (Listed & { object: string })[]);
    const ids = listed.map((k) => k.id);
    expect(new Set(ids).size).toBe(5);
    expect(ids).toEqual(expect.arrayContaining(minted));
    expect(listed.every((k) => k.object === "api_key" && !("secret" in k))).toBe(true);
    expectNewestFirst(listed, [ids.find((id) => !minted.includes(id))!, ...minted]);

    const whole = await call("GET", "/v1/keys", { key: seller.key });
    expect(whole.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(whole.body.keys.map((k: Listed) => k.id)).toEqual(ids);
  });
});

describe("Idempotency-Key per mode", () => {
  it("the same key with a test key and a live key of one account makes two checkouts; each replays its own", async () => {
    const seller = await newSeller();
    const live = await liveKeyOf(seller);
    const idem = `idem-mode-${Date.now()}`;
    const body = { title: "Once per mode", price_usd: "1.00" };
    const headers = { "idempotency-key": idem };

    const asTest = await call("POST", "/v1/checkouts", { key: seller.key, body, headers });
    const asLive = await call("POST", "/v1/checkouts", { key: live, body, headers });
    expect(asTest.status).toBe(201);
    expect(asLive.status).toBe(201);
    expect(asLive.headers.get("idempotency-replayed")).toBeNull();
    expect(asLive.body.id).not.toBe(asTest.body.id);
    expect(asTest.body.test_mode).toBe(true);
    expect(asLive.body.test_mode).toBe(false);

    const testAgain = await call("POST", "/v1/checkouts", { key: seller.key, body, headers });
    const liveAgain = await call("POST", "/v1/checkouts", { key: live, body, headers });
    expect(testAgain.headers.get("idempotency-replayed")).toBe("true");
    expect(testAgain.body).toEqual(asTest.body);
    expect(liveAgain.headers.get("idempotency-replayed")).toBe("true");
    expect(liveAgain.body).toEqual(asLive.body);

    const list = await call("GET", "/v1/checkouts", { key: seller.key });
    expect(list.body.checkouts.map((c: Listed) => c.id).sort()).toEqual([asTest.body.id, asLive.body.id].sort());
  });
});

describe("pay_to checksum (EIP-55)", () => {
  const checksummed = getAddress("0x" + "ab".repeat(20));
  let key: string;
  beforeAll(async () => {
    key = (await newSeller()).key;
  });

  it("refuses a mixed-case pay_to whose checksum is wrong with 422 naming pay_to", async () => {
    const wrong = checksummed.replace(/[a-f]/, (c) => c.toUpperCase());
    expect(wrong).not.toBe(checksummed);
    const r = await call("POST", "/v1/checkouts", { key, body: { title: "x", price_usd: "0.10", pay_to: wrong } });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([{ field: "pay_to", reason: expect.stringContaining("checksum") }]);
  });

  it("accepts a correctly checksummed or all-lowercase pay_to, stored checksummed", async () => {
    for (const payTo of [checksummed, checksummed.toLowerCase()]) {
      expect((await newCheckout(key, { pay_to: payTo })).pay_to).toBe(checksummed);
    }
  });
});
