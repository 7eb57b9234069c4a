import type { Response } from "express";
import { allowFraming } from "../src/http/embed-origins";
import { paidArticlePolicy } from "../src/views/content";

/**
 * The headers that let a page be framed name only origins the framing rule
 * accepts (@c402/contracts framingOriginRefusal): an origin stored before the
 * rule (a wildcard canonical URL, say) never reaches `frame-ancestors`.
 */
describe("frame-ancestors headers", () => {
  const headersAfter = (origins: readonly string[]) => {
    const headers = new Map<string, string>([
      ["content-security-policy", "frame-ancestors 'none'"],
      ["x-frame-options", "DENY"],
    ]);
    const res = {
      setHeader: (name: string, value: string) => headers.set(name.toLowerCase(), value),
      removeHeader: (name: string) => headers.delete(name.toLowerCase()),
    } as unknown as Response;
    allowFraming(res, origins);
    return Object.fromEntries(headers);
  };

  it("a page names the accepted origins, each once, and drops anything else", () => {
    expect(
      headersAfter(["https://shop.example", "https://*", "http://localhost:5173", "https://*.blog.example", "http://plain.example", "https://shop.example"]),
    ).toEqual({
      "content-security-policy": "frame-ancestors https://shop.example http://localhost:5173",
    });
  });

  it("a page whose every origin is refused stays unframeable", () => {
    const unframeable = { "content-security-policy": "frame-ancestors 'none'", "x-frame-options": "DENY" };
    expect(headersAfter(["https://*", "https://*.example.com"])).toEqual(unframeable);
    expect(headersAfter([])).toEqual(unframeable);
  });

  it("a paid article's policy names the accepted origins only, else 'none'", () => {
    const ancestorsOf = (origins: readonly string[]) => /(?:^|; )frame-ancestors ([^;]*)$/.exec(paidArticlePolicy(origins))?.[1];
    expect(ancestorsOf(["https://shop.example", "https://*", "https://blog.example", "https://*.example.com"])).toBe(
      "https://shop.example https://blog.example",
    );
    expect(ancestorsOf(["https://*"])).toBe("'none'");
    expect(ancestorsOf([])).toBe("'none'");
    expect(paidArticlePolicy(["https://*", "https://*.example.com"])).not.toContain("*");
  });
});
