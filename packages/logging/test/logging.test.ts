import { createCapturingLogger } from "../src";

describe("logging", () => {
  it("writes one structured line and never a secret", () => {
    const { logger: log, lines } = createCapturingLogger({ service: "test" });
    log.info({ req: { headers: { authorization: "Bearer sk_test_abc", "x-payment": "eyJ" } }, secret: "s3cr3t" }, "request");
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] as string);
    expect(line.service).toBe("test");
    expect(line.msg).toBe("request");
    expect(lines[0]).not.toContain("sk_test_abc");
    expect(lines[0]).not.toContain("s3cr3t");
    expect(lines[0]).not.toContain("eyJ");
  });
});
