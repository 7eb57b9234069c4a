import { DependencyUnavailableError, isOwnFailure, ProblemError, invalid, problemOf, toProblemDocument } from "../src";

describe("problem documents", () => {
  it("renders type, title, status, detail and top-level help as the spec says", () => {
    const doc = toProblemDocument(new ProblemError("not-found", "No such checkout."), "https://site.example/");
    expect(doc).toEqual({
      type: "https://site.example/problems/not-found",
      title: "Not found",
      status: 404,
      detail: { message: "No such checkout.", help: doc.help },
      help: { fix: expect.any(String), prepare: null, retry_is_safe: false },
    });
  });

  it("carries errors[] of {field, reason} on 422", () => {
    const doc = toProblemDocument(invalid([{ field: "title", reason: "required" }]), "https://s");
    expect(doc.status).toBe(422);
    expect(doc.type).toBe("https://s/problems/invalid-request");
    expect(doc.errors).toEqual([{ field: "title", reason: "required" }]);
  });

  it("keeps help extensions and top-level extensions", () => {
    const p = new ProblemError("rate-limited", {
      message: "Daily rehearsal budget spent.",
      help: { fix: "Go live.", retry_is_safe: false, report: { url: "x" } },
      extensions: { live_url: "https://s/c/chk_1" },
    });
    const doc = toProblemDocument(p, "https://s");
    expect(doc.help).toEqual({ fix: "Go live.", prepare: null, retry_is_safe: false, report: { url: "x" } });
    expect(doc.live_url).toBe("https://s/c/chk_1");
    expect(doc.status).toBe(429);
  });
});

describe("HTTP-level slugs", () => {
  it.each([
    ["method-not-allowed", 405, "Method not allowed"],
    ["payload-too-large", 413, "Content too large"],
    ["unsupported-media-type", 415, "Unsupported media type"],
  ] as const)("%s is %i with a title, a fix and retry_is_safe false", (slug, status, title) => {
    const doc = toProblemDocument(new ProblemError(slug, "x"), "https://s");
    expect(doc).toMatchObject({ type: `https://s/problems/${slug}`, status, title, help: { fix: expect.any(String), retry_is_safe: false } });
  });
});

describe("whose failure a problem is", () => {
  it("counts every 5xx as this service's own failure except a seller's server failing", () => {
    expect(isOwnFailure(new ProblemError("internal", "boom"))).toBe(true);
    expect(isOwnFailure(new ProblemError("unavailable", "no network"))).toBe(true);
    expect(isOwnFailure(new ProblemError("upstream-failed", "the seller's server is down"))).toBe(false);
    expect(isOwnFailure(new ProblemError("not-found", "no such thing"))).toBe(false);
  });
});

describe("the problem a failure is answered with", () => {
  it("keeps a problem, answers a dependency's outage 503 unavailable (safe to retry), and anything else 500 internal without its words", () => {
    const refused = new ProblemError("not-found", "No such checkout.");
    expect(problemOf(refused)).toBe(refused);
    const outage = new DependencyUnavailableError(
      "The database could not be reached.",
      Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
    );
    expect(outage.cause).toMatchObject({ code: "ECONNREFUSED" });
    const unavailable = problemOf(outage);
    expect(unavailable).toMatchObject({ slug: "unavailable", status: 503, help: { retry_is_safe: true } });
    expect(unavailable.message).not.toContain("ECONNREFUSED");
    const internal = problemOf(new Error("database password is hunter2"));
    expect(internal).toMatchObject({ slug: "internal", status: 500, help: { retry_is_safe: true } });
    expect(internal.message).not.toContain("hunter2");
  });
});
