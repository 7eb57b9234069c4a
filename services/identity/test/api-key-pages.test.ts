import { migrate } from "@c402/db";
import { newId } from "@c402/ids";
import { describeOnEachDatabase, type TestDatabase } from "@c402/testkit";
import { identityMigrations } from "../src";
import { Identity } from "../src/domain/identity";
import { identityStore, type ApiKeyPage, type ApiKeyRow, type IdentityDb } from "../src/store/identity-store";

/** Keyset pages of GET /v1/keys, on the store and the domain, against a real database. */
function apiKeyPagesContract(open: () => Promise<TestDatabase>) {
  let ctx: Awaited<ReturnType<typeof open>>;
  let db: IdentityDb;
  let identity: Identity;
  const account = "acct_keypages";
  const created: string[] = [];

  /** Every page of the account's keys, walking `after` from the last key of each. */
  async function walk(size: number): Promise<ApiKeyRow[][]> {
    const pages: ApiKeyRow[][] = [];
    let page: ApiKeyPage = { size };
    for (;;) {
      const rows = await identity.listKeys(account, page);
      pages.push(rows);
      const last = rows[rows.length - 1];
      if (rows.length < size || !last) return pages;
      if (pages.length > 20) throw new Error("pagination does not end");
      page = { size, after: { createdAt: last.created_at, id: last.id } };
    }
  }

  const insertKey = (trx: IdentityDb, accountId = account) =>
    identityStore.insertApiKey(trx, {
      id: newId("apiKey"),
      account_id: accountId,
      name: null,
      prefix: "sk_test_abcd",
      secret_hash: newId("apiKey"),
      scope: "read_only",
      mode: "test",
    });

  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.database, identityMigrations);
    db = ctx.database.db as IdentityDb;
    identity = new Identity(db, { baseUrl: "http://127.0.0.1:4020", challengeTtlSeconds: 600 });
    await identityStore.insertAccount(db, { id: account, created_at: new Date() });
    await identityStore.insertAccount(db, { id: "acct_keypages_other", created_at: new Date() });
    // created_at defaults to now(), the transaction's start: these five tie, and
    // only the id orders them. Two more keys follow in their own transactions.
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < 5; i++) created.push((await insertKey(trx)).id);
    });
    for (let i = 0; i < 2; i++) created.push((await insertKey(db)).id);
    await insertKey(db, "acct_keypages_other");
  });
  afterAll(() => ctx.close());

  it("walks every page exactly once, newest first, ties on created_at included", async () => {
    const all = await identity.listKeys(account, { size: 1000 });
    expect(all.map((k) => k.id).sort()).toEqual([...created].sort());
    for (let i = 1; i < all.length; i++) expect(all[i - 1]!.created_at.getTime()).toBeGreaterThanOrEqual(all[i]!.created_at.getTime());
    expect(all.every((k) => k.account_id === account)).toBe(true);
    for (const size of [1, 2, 3]) {
      const pages = await walk(size);
      expect(pages.flat().map((k) => k.id)).toEqual(all.map((k) => k.id));
      expect(pages.slice(0, -1).every((p) => p.length === size)).toBe(true);
    }
    expect((await walk(3)).map((p) => p.length)).toEqual([3, 3, 1]);
  });

  it("a page starts strictly after the key its cursor names", async () => {
    const all = await identity.listKeys(account, { size: 1000 });
    const fourth = all[3]!;
    const rest = await identity.listKeys(account, { size: 1000, after: { createdAt: fourth.created_at, id: fourth.id } });
    expect(rest.map((k) => k.id)).toEqual(all.slice(4).map((k) => k.id));
  });

  it.each([0, 1001])("refuses page size %p", async (size) => {
    await expect(identity.listKeys(account, { size })).rejects.toMatchObject({ slug: "invalid-request", errors: [{ field: "page_size" }] });
  });
}

describeOnEachDatabase("API key pages", "identity", apiKeyPagesContract);
