import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The README shows the ten-line receiver whole; the e2e suite runs the file (test-e2e/test/webhooks.test.ts). */
describe("the README's webhook receiver", () => {
  it("is ten-lines.mjs verbatim, and about ten lines", () => {
    const file = readFileSync(join(__dirname, "..", "ten-lines.mjs"), "utf8");
    const readme = readFileSync(join(__dirname, "..", "..", "..", "README.md"), "utf8");
    expect(readme).toContain("```js\n" + file + "```");
    expect(file.trim().split("\n").length).toBeLessThanOrEqual(13);
  });
});
