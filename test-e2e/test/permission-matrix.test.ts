import { eventually } from "@c402/testkit";
import { baseUrl, call, callFrom, newCheckout, newSeller, otherLoopbackAddress, payRehearsal, walletSession, type Reply } from "../src/http";
import { seriesOnceIn, subscribe } from "../src/series";

/**
 * Target G28: the permission matrix, generated from the route table. Every
 * operation of /openapi.json that names a minimum scope (`x-minimum-scope`)
 * is called with each credential: none, a revoked key, keys of each scope
 * (test mode), a live full key, and another account's full key. A credential
 * below the scope gets 403 naming it; none or revoked gets 401; another
 * account never reaches this account's resources (404); every credential at
 * or above the scope gets past authorization (neither 401 nor 403). A new
 * authenticated route is covered as soon as it is documented; a path
 * parameter this file cannot fill fails the test, naming it. Failed
 * authentications are limited per client address and per key prefix, so each
 * one is sent from a loopback address of its own with a key revoked for it.
 */

type Scope = "read_only" | "payments" | "full";
const RANK: Record<Scope, number> = { read_only: 1, payments: 2, full: 3 };

interface Operation {
  method: string;
  template: string;
  minimum: Scope;
  /** Only a session may call it (`x-credential: session`, e.g. logout): a key gets 403 whatever its scope. */
  sessionOnly: boolean;
  /** A live key, an OAuth token or a session (`x-credential: live`, a spending wallet's pay): a test key gets 403 whatever its scope. */
  liveOnly: boolean;
}

interface Account {
  wallet: Awaited<ReturnType<typeof newSeller>>["wallet"];
  keys: Record<Scope, string>;
  live: string;
  session: string;
  checkoutId: string;
  /** A gated article (cnt_), for /v1/content/{id}. */
  articleId: string;
  /** A report filed on the checkout (anonymously, as any buyer may). */
  reportId: string;
  originKeyId: string;
  /** A rehearsal sale of a webhook checkout, awaiting fulfilment. */
  webhookSaleId: string;
  /** A webhook receiver (on a loopback port nobody listens on) and the delivery of that sale to it. */
  webhookId: string;
  deliveryId: string;
  /** A recurring series bought on the rehearsal face (its periods a month apart: it stays active). */
  scheduleId: string;
}

async function mintKey(credential: string, scope: Scope, mode: "test" | "live"): Promise<{ id: string; secret: string }> {
  const r = await call("POST", "/v1/keys", { key: credential, body: { scope, mode, name: `matrix ${scope} ${mode}` } });
  if (r.status !== 201) throw new Error(`mint ${scope} ${mode}: ${r.status} ${r.text}`);
  return { id: r.body.id, secret: r.body.secret };
}

async function newAccount(): Promise<Account> {
  const seller = await newSeller();
  const session = await walletSession(seller.wallet);
  const keys = {
    read_only: (await mintKey(seller.key, "read_only", "test")).secret,
    payments: (await mintKey(seller.key, "payments", "test")).secret,
    full: seller.key,
  };
  const live = (await mintKey(session, "full", "live")).secret;
  const checkout = await newCheckout(seller.key, { reusable: true });
  const article = await newCheckout(seller.key, { payload: "<p>matrix</p>", content: {} });
  const report = await call("POST", `/v1/checkouts/${checkout.id}/reports`, { body: { category: "other", detail: "permission matrix" } });
  if (report.status !== 201) throw new Error(`report: ${report.status} ${report.text}`);
  const originKey = await call("POST", "/v1/origin-keys", { key: seller.key, body: { auth_type: "bearer", value: "matrix-origin-secret" } });
  if (originKey.status !== 201) throw new Error(`origin key: ${originKey.status} ${originKey.text}`);
  const receiver = await call("POST", "/v1/webhooks", { key: seller.key, body: { url: "http://127.0.0.1:2/hook" } });
  if (receiver.status !== 201) throw new Error(`webhook receiver: ${receiver.status} ${receiver.text}`);
  const webhook = await newCheckout(seller.key, { fulfillment: "webhook", payload: undefined, reusable: true });
  const sale = await payRehearsal(webhook.id);
  if (sale.status !== 200) throw new Error(`webhook sale: ${sale.status} ${sale.text}`);
  const deliveries = await eventually(
    () => call("GET", `/v1/webhooks/${receiver.body.id}/deliveries`, { key: seller.key }),
    (r) => r.status === 200 && r.body.deliveries.length > 0,
  );
  const series = await newCheckout(seller.key, { schedule_interval_days: 30, schedule_periods: 3, reusable: true });
  const bought = await subscribe(`/c/${series.id}/test`);
  if (bought.paid.status !== 200) throw new Error(`series: ${bought.paid.status} ${bought.paid.text}`);
  const scheduleId = bought.paid.body.schedule.id as string;
  await seriesOnceIn(seller.key, scheduleId, () => true);
  return {
    wallet: seller.wallet,
    keys,
    live,
    session,
    checkoutId: checkout.id,
    articleId: article.id,
    reportId: report.body.id,
    originKeyId: originKey.body.id,
    webhookSaleId: sale.body.receipt.id,
    webhookId: receiver.body.id,
    deliveryId: deliveries.body.deliveries[0].id,
    scheduleId,
  };
}

describe("the permission matrix (G28), generated from the route table", () => {
  const operations: Operation[] = [];
  let owner: Account;
  let other: Account;

  beforeAll(async () => {
    const doc = (await call("GET", "/openapi.json")).body as { paths: Record<string, Record<string, { "x-minimum-scope"?: Scope; "x-credential"?: string }>> };
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const minimum = op["x-minimum-scope"];
        if (minimum)
          operations.push({
            method: method.toUpperCase(),
            template,
            minimum,
            sessionOnly: op["x-credential"] === "session",
            liveOnly: op["x-credential"] === "live",
          });
      }
    }
    owner = await newAccount();
    other = await newAccount();
  }, 60_000);

  /** The path with every parameter filled with a resource of `account`; a fresh key to revoke for /v1/keys/{key_id}. */
  async function pathFor(op: Operation, account: Account): Promise<string> {
    let path = op.template;
    for (const [, name] of op.template.matchAll(/\{([^}]+)\}/g)) {
      let value: string;
      if (name === "id" && op.template.startsWith("/v1/checkouts/")) value = account.checkoutId;
      else if (name === "id" && op.template.startsWith("/v1/webhooks/")) value = account.webhookId;
      else if (name === "id" && op.template.startsWith("/v1/content/")) value = account.articleId;
      else if (name === "id" && op.template.startsWith("/v1/schedules/")) value = account.scheduleId;
      else if (name === "delivery_id") value = account.deliveryId;
      else if (name === "report_id") value = account.reportId;
      else if (name === "secret_id") value = account.originKeyId;
      else if (name === "key_id") value = (await mintKey(account.keys.full, "read_only", "test")).id;
      else if (name === "payment_id") value = account.webhookSaleId;
      else if (name === "chain") value = "base";
      else throw new Error(`the permission matrix cannot fill {${name}} of ${op.method} ${op.template}: add a fixture for it`);
      path = path.replace(`{${name}}`, value);
    }
    return path;
  }

  /** A body that passes validation, for operations whose body is checked before the resource is looked up. */
  const VALID_BODIES: Record<string, unknown> = {
    "PATCH /v1/checkouts/{id}": { coverage: "permission matrix" },
    "POST /v1/checkouts/{id}/extend": { expires_in_minutes: 60 },
    "PATCH /v1/reports/{report_id}": { status: "acknowledged" },
    "PATCH /v1/origin-keys/{secret_id}": { value: "rotated-origin-secret" },
    "POST /v1/content/{id}/grants": { subject: "permission matrix" },
    "POST /v1/grants": { subject: "permission matrix" },
    "POST /v1/checkouts/{id}/payouts": { chain: "stellar", address: "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H" },
    // A URL that asks for no payment: whoever gets past authorization is answered paid:false (or 404 without a wallet).
    "POST /v1/spending-wallets/{chain}/pay": { url: `${baseUrl()}/health` },
  };
  const send = async (op: Operation, path: string, key?: string): Promise<Reply> =>
    call(op.method, path, {
      ...(key ? { key } : {}),
      ...(op.method === "GET" || op.method === "DELETE" ? {} : { body: VALID_BODIES[`${op.method} ${op.template}`] ?? {} }),
    });

  it("covers every authenticated route of the document", () => {
    expect(operations.length).toBeGreaterThanOrEqual(10);
    expect(operations.map((o) => `${o.method} ${o.template}`)).toEqual(
      expect.arrayContaining(["POST /v1/checkouts", "PATCH /v1/checkouts/{id}", "DELETE /v1/checkouts/{id}", "POST /v1/keys", "GET /v1/account/events"]),
    );
  });

  it("asks the scopes the spec names: the four scope-gated endpoints, and read_only never creates or changes anything", () => {
    const minimum = Object.fromEntries(operations.map((o) => [`${o.method} ${o.template}`, o.minimum]));
    expect(minimum).toMatchObject({
      "PUT /v1/account/wallets": "full",
      "POST /v1/webhooks": "full",
      "DELETE /v1/webhooks/{id}": "full",
      "POST /v1/receipts/{payment_id}/fulfilled": "payments",
      "POST /v1/account/wallets/preview": "read_only",
      "POST /v1/keys": "full",
    });
    // What a read_only key may call beyond reading: the preview (it changes nothing), its own revocation,
    // and the session mint and logout (which refuse keys: x-credential session, or 403 for a key).
    // (A spending wallet's writes are a session's only: x-credential session, 403 for any key.)
    const readOnlyChanges = operations
      .filter((o) => o.minimum === "read_only" && o.method !== "GET" && !(o.sessionOnly && o.template.startsWith("/v1/spending-wallets")))
      .map((o) => `${o.method} ${o.template}`);
    expect(readOnlyChanges.sort()).toEqual(
      ["DELETE /v1/keys/{key_id}", "POST /auth/logout", "POST /auth/session/cookie", "POST /v1/account/wallets/preview"].sort(),
    );
  });

  /** A key of `account`, revoked at once. */
  async function revokedKey(account: Account): Promise<string> {
    const doomed = await mintKey(account.keys.full, "full", "test");
    expect((await call("DELETE", `/v1/keys/${doomed.id}`, { key: account.keys.full })).status).toBe(204);
    return doomed.secret;
  }

  /** `send` from a loopback address no other request uses: failed authentications are counted per address. */
  const sendAlone = (op: Operation, path: string, key?: string): Promise<Reply> =>
    callFrom(otherLoopbackAddress(), op.method, path, {
      ...(key ? { key } : {}),
      ...(op.method === "GET" || op.method === "DELETE" ? {} : { body: VALID_BODIES[`${op.method} ${op.template}`] ?? {} }),
    });

  it("no credential and a revoked key get 401; a key below the scope gets 403 naming it", async () => {
    const failures: string[] = [];
    for (const op of operations) {
      const path = await pathFor(op, owner);
      for (const [who, key] of [
        ["no credential", undefined],
        ["revoked key", await revokedKey(owner)],
      ] as const) {
        const r = await sendAlone(op, path, key);
        if (r.status !== 401) failures.push(`${op.method} ${op.template} with ${who}: ${r.status}, expected 401`);
      }
      for (const scope of (["read_only", "payments"] as const).filter((s) => RANK[s] < RANK[op.minimum])) {
        const r = await send(op, path, owner.keys[scope]);
        if (r.status !== 403) failures.push(`${op.method} ${op.template} with a ${scope} key: ${r.status}, expected 403`);
        else if (r.body?.needed_scope !== op.minimum) failures.push(`${op.method} ${op.template} with a ${scope} key: 403 without needed_scope ${op.minimum}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it("another account's full key never reaches this account's resources: 404", async () => {
    const failures: string[] = [];
    // {chain} names no resource: a spending wallet route acts on the caller's own wallet of that chain.
    for (const op of operations.filter((o) => o.template.includes("{") && !o.template.includes("{chain}"))) {
      const r = await send(op, await pathFor(op, owner), other.keys.full);
      if (r.status !== 404) failures.push(`${op.method} ${op.template}: ${r.status} ${r.text.slice(0, 400)}`);
    }
    expect(failures).toEqual([]);
    // And the owner's checkout is unchanged by all of it.
    expect((await call("GET", `/v1/checkouts/${owner.checkoutId}`, { key: owner.keys.full })).body).toMatchObject({ status: "open" });
  }, 120_000);

  it("every key at or above the scope, test or live, and a wallet session get past authorization", async () => {
    const failures: string[] = [];
    // Destructive calls last, so the checkout is still there for the others.
    const ordered = [...operations].sort((a, b) => Number(a.method === "DELETE") - Number(b.method === "DELETE"));
    for (const op of ordered) {
      if (op.sessionOnly) {
        // A key is refused whatever its scope; a session (a fresh one: this may end it) gets through.
        for (const key of [owner.keys.full, owner.live]) {
          const r = await send(op, await pathFor(op, owner), key);
          if (r.status !== 403) failures.push(`${op.method} ${op.template} (sessions only) with a key: ${r.status}`);
        }
        const r = await send(op, await pathFor(op, owner), await walletSession(owner.wallet));
        if (r.status === 401 || r.status === 403 || r.status >= 500)
          failures.push(`${op.method} ${op.template} with a session: ${r.status} ${r.text.slice(0, 160)}`);
        continue;
      }
      if (op.liveOnly) {
        // A test key is refused whatever its scope; a live key and a session get through.
        for (const scope of (["payments", "full"] as const).filter((s) => RANK[s] >= RANK[op.minimum])) {
          const r = await send(op, await pathFor(op, owner), owner.keys[scope]);
          if (r.status !== 403) failures.push(`${op.method} ${op.template} (live only) with a test ${scope} key: ${r.status}`);
        }
        for (const [who, key] of [
          ["live full key", owner.live],
          ["wallet session", owner.session],
        ] as const) {
          const r = await send(op, await pathFor(op, owner), key);
          if (r.status === 401 || r.status === 403 || r.status >= 500)
            failures.push(`${op.method} ${op.template} with ${who}: ${r.status} ${r.text.slice(0, 160)}`);
        }
        continue;
      }
      if (op.method === "DELETE" && op.template === "/v1/keys/{key_id}") {
        // Any key may revoke itself (revoking another needs full: services/gateway/test/routes/keys.test.ts).
        for (const scope of ["read_only", "payments", "full"] as const) {
          const own = await mintKey(owner.keys.full, scope, "test");
          const r = await call("DELETE", `/v1/keys/${own.id}`, { key: own.secret });
          if (r.status !== 204) failures.push(`DELETE /v1/keys/{key_id}: a ${scope} key revoking itself got ${r.status}`);
        }
        continue;
      }
      const allowed: [string, string][] = [
        ...(["read_only", "payments", "full"] as const).filter((s) => RANK[s] >= RANK[op.minimum]).map((s): [string, string] => [`${s} key`, owner.keys[s]]),
        ["live full key", owner.live],
        ["wallet session", owner.session],
      ];
      for (const [who, key] of allowed) {
        const r = await send(op, await pathFor(op, owner), key);
        if (r.status === 401 || r.status === 403 || r.status >= 500)
          failures.push(`${op.method} ${op.template} with ${who}: ${r.status} ${r.text.slice(0, 160)}`);
      }
    }
    expect(failures).toEqual([]);
  }, 180_000);
});
