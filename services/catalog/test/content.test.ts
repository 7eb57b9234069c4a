import { migrate } from "@c402/db";
import { describeOnEachDatabase, type TestDatabase } from "@c402/testkit";
import { catalogMigrations } from "../src";
import { Catalog, type CreateRequest } from "../src/domain/catalog";
import { contentDeclarationOf } from "../src/domain/content-rules";
import { checkoutFromSnapshot, snapshotOf } from "../src/store/catalog-store";

/** Gated articles in the catalog: the declaration's rules, the cnt_ id, and the article's own PATCH fields. */

const WALLET = "0x1111111111111111111111111111111111111111";
const article = (over: Partial<CreateRequest> = {}): CreateRequest => ({
  accountId: "acct_writer",
  actor: "key:sk_test_abcd",
  fingerprint: "fp",
  title: "The manor mystery",
  priceUsd: "0.25",
  offer: {},
  createdWithLiveKey: false,
  payloadJson: JSON.stringify("<p>It was a dark night.</p>"),
  contentJson: JSON.stringify({ author: "A. Writer" }),
  ...over,
});

describe("the content declaration", () => {
  const of = (value: unknown) => {
    const errors: { field: string; reason: string }[] = [];
    const declaration = contentDeclarationOf(JSON.stringify(value), errors);
    return { declaration, fields: errors.map((e) => e.field) };
  };

  it("fills every default: seller-wide passes for 24 hours", () => {
    expect(of({}).declaration).toEqual({
      teaser: null,
      author: null,
      published: null,
      canonical_url: null,
      keywords: [],
      section: null,
      language: null,
      license_url: null,
      pass_scope: "seller",
      pass_hours: 24,
    });
  });

  it("keeps what is valid as sent", () => {
    const sent = {
      teaser: "Who did it?",
      author: "A. Writer",
      published: "2026-11-01T08:30:00Z",
      canonical_url: "https://blog.example/manor",
      keywords: ["mystery"],
      section: "Fiction",
      language: "pt-BR",
      license_url: "http://creativecommons.example/by/4.0",
      pass_scope: "content",
      pass_hours: 8760,
    };
    expect(of(sent)).toEqual({ declaration: sent, fields: [] });
    expect(of({ canonical_url: "http://localhost:3000/a" }).fields).toEqual([]);
  });

  it("names every refused field", () => {
    expect(of([]).fields).toEqual(["content"]);
    expect(of("x").fields).toEqual(["content"]);
    expect(
      of({
        colour: "red",
        teaser: "t".repeat(2001),
        published: "2026-13-45",
        canonical_url: "http://blog.example/a",
        license_url: "ftp://x.example",
        keywords: Array.from({ length: 21 }, () => "k"),
        language: "english please",
        pass_scope: "everyone",
        pass_hours: 0,
        author: 7,
      }).fields.sort(),
    ).toEqual(
      [
        "content.colour",
        "content.teaser",
        "content.published",
        "content.canonical_url",
        "content.license_url",
        "content.keywords",
        "content.language",
        "content.pass_scope",
        "content.pass_hours",
        "content.author",
      ].sort(),
    );
    expect(of({ keywords: [""] }).fields).toEqual(["content.keywords"]);
    expect(of({ canonical_url: "https://user:pw@blog.example/" }).fields).toEqual(["content.canonical_url"]);
  });

  it("a canonical URL names one site, as the embed allowlist does: its origin may frame the article", () => {
    const refusals = (canonical_url: string) => {
      const errors: { field: string; reason: string }[] = [];
      contentDeclarationOf(JSON.stringify({ canonical_url }), errors);
      return errors;
    };
    for (const value of ["https://*/", "https://*.example.com/a", "http://*.localhost/", "http://example.com/"]) {
      expect({ value, errors: refusals(value) }).toEqual({ value, errors: [{ field: "content.canonical_url", reason: expect.any(String) }] });
    }
    const wildcard = { field: "content.canonical_url", reason: "must name one site: wildcards are refused (its origin may frame the article)" };
    expect(refusals("https://*/")).toEqual([wildcard]);
    expect(refusals("https://*.example.com/a")).toEqual([wildcard]);
    for (const value of ["https://blog.example/post/1", "http://localhost:3000/x"]) {
      expect({ value, declaration: of({ canonical_url: value }).declaration?.canonical_url }).toEqual({ value, declaration: value });
    }
  });
});

function contentContract(open: () => Promise<TestDatabase>) {
  let ctx: TestDatabase;
  let catalog: Catalog;

  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.database, catalogMigrations);
    catalog = new Catalog({ db: ctx.database.db, payoutWallets: async () => [{ chainFamily: "eip155", address: WALLET, isDefault: true }] });
  });
  afterAll(() => ctx.close());

  it("an article gets a cnt_ id and keeps its declaration, normalized (and so does an idempotent replay)", async () => {
    const { checkout } = await catalog.create(article({ idempotencyKey: "a-1" }));
    expect(checkout.id).toMatch(/^cnt_/);
    expect(JSON.parse(checkout.content_json ?? "null")).toMatchObject({ author: "A. Writer", pass_scope: "seller", pass_hours: 24 });
    expect((await catalog.get(checkout.id)).content_json).toBe(checkout.content_json);
    expect(checkoutFromSnapshot(snapshotOf(checkout)).content_json).toBe(checkout.content_json);
    const replay = await catalog.create(article({ idempotencyKey: "a-1" }));
    expect([replay.replayed, replay.checkout.id]).toEqual([true, checkout.id]);
    const plain = await catalog.create(article({ contentJson: undefined as never }));
    expect([plain.checkout.id.slice(0, 4), plain.checkout.content_json]).toEqual(["chk_", null]);
  });

  it("an article is sold inline with its body, never as a package", async () => {
    const fields = (over: Partial<CreateRequest>) =>
      catalog.create(article(over)).then(
        () => [],
        (err: { errors: { field: string }[] }) => err.errors.map((e) => e.field),
      );
    expect(await fields({ fulfillment: "webhook", payloadJson: undefined as never })).toContain("fulfillment");
    expect(await fields({ payloadJson: undefined as never })).toEqual(["payload"]);
    expect(await fields({ payloadJson: '""' })).toEqual(["payload"]);
    expect(await fields({ contentJson: JSON.stringify({ pass_hours: 0 }) })).toEqual(["content.pass_hours"]);
  });

  it("PATCH replaces the body and the whole declaration, on articles only; neither can be cleared", async () => {
    const { checkout } = await catalog.create(article({ contentJson: JSON.stringify({ author: "A. Writer", pass_hours: 48 }) }));
    const patched = await catalog.update(
      "acct_writer",
      checkout.id,
      { offer: {}, clear: [], payloadJson: JSON.stringify("<p>Second edition</p>"), contentJson: JSON.stringify({ teaser: "New" }) },
      "key:sk_test_abcd",
    );
    expect(patched.changed.sort()).toEqual(["content", "payload"]);
    expect(patched.checkout.payload_json).toBe(JSON.stringify("<p>Second edition</p>"));
    // The whole declaration is replaced: the author and the 48 hours are gone.
    expect(JSON.parse(patched.checkout.content_json ?? "null")).toMatchObject({ teaser: "New", author: null, pass_hours: 24 });
    const same = await catalog.update("acct_writer", checkout.id, { offer: {}, clear: [], contentJson: JSON.stringify({ teaser: "New" }) }, "key:sk_test_abcd");
    expect(same.changed).toEqual([]);
    await expect(catalog.update("acct_writer", checkout.id, { offer: {}, clear: ["payload", "content"] }, "key:sk_test_abcd")).rejects.toMatchObject({
      errors: [expect.objectContaining({ field: "payload" }), expect.objectContaining({ field: "content" })],
    });
    const plain = await catalog.create(article({ contentJson: undefined as never }));
    await expect(catalog.update("acct_writer", plain.checkout.id, { offer: {}, clear: [], contentJson: "{}" }, "key:sk_test_abcd")).rejects.toMatchObject({
      errors: [{ field: "content", reason: expect.stringContaining("gated content") }],
    });
  });
}

describeOnEachDatabase("gated articles in the catalog", "catalog", contentContract);
