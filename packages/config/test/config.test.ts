import { ConfigError, describeConfig, env, loadConfig } from "../src";

const spec = {
  port: env.int("PORT", "gateway port", { default: 4020, min: 0, max: 65535 }),
  databaseUrl: env.string("DATABASE_URL", "Postgres URL"),
  masterKey: env.string("MASTER_KEY", "envelope key", { secret: true }),
  mode: env.oneOf("RUN_MODE", "run mode", ["embedded", "distributed"] as const, { default: "embedded" }),
  debug: env.bool("DEBUG", "debug", { default: false }),
};

describe("config", () => {
  it("parses typed values and applies defaults", () => {
    const c = loadConfig(spec, { DATABASE_URL: "postgres://u:pw@h/db", MASTER_KEY: "k" });
    expect(c).toEqual({ port: 4020, databaseUrl: "postgres://u:pw@h/db", masterKey: "k", mode: "embedded", debug: false });
  });

  it("reports every problem at once", () => {
    try {
      loadConfig(spec, { PORT: "abc", RUN_MODE: "cloud", DEBUG: "maybe" });
      throw new Error("expected failure");
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems;
      expect(problems).toHaveLength(5);
      expect(problems.join("\n")).toMatch(/PORT must be an integer/);
      expect(problems.join("\n")).toMatch(/DATABASE_URL is required/);
      expect(problems.join("\n")).toMatch(/MASTER_KEY is required/);
      expect(problems.join("\n")).toMatch(/RUN_MODE must be one of/);
    }
  });

  it("masks secrets and URL passwords when described", () => {
    const c = loadConfig(spec, { DATABASE_URL: "postgres://u:pw@h/db", MASTER_KEY: "topsecret" });
    const d = describeConfig(spec, c);
    expect(d.MASTER_KEY).toBe("********");
    expect(d.DATABASE_URL).toBe("postgres://u:********@h/db");
    expect(JSON.stringify(d)).not.toContain("topsecret");
    expect(JSON.stringify(d)).not.toContain("pw@");
  });
});
