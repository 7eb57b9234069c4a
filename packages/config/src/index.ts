/**
 * Typed configuration read from the environment once, at boot. Every problem is
 * collected and reported together; secrets are masked whenever the
 * configuration is described (for example in the boot log line).
 */

export interface Setting<T> {
  env: string;
  secret: boolean;
  describe: string;
  read(raw: string | undefined): T;
}

/** The value a setting takes when its variable is unset: the default its config module declares (one place per default). */
export function defaultOf<T>(setting: Setting<T>): T {
  return setting.read(undefined);
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
}

class Invalid extends Error {}

interface Options<T> {
  default?: T;
  secret?: boolean;
}

function setting<T>(env: string, describe: string, opts: Options<T>, parse: (raw: string) => T): Setting<T> {
  return {
    env,
    describe,
    secret: opts.secret ?? false,
    read(raw) {
      if (raw === undefined || raw === "") {
        if ("default" in opts) return opts.default as T;
        throw new Invalid(`${env} is required (${describe})`);
      }
      return parse(raw);
    },
  };
}

export const setting$ = {
  string(env: string, describe: string, opts: Options<string> = {}): Setting<string> {
    return setting(env, describe, opts, (raw) => raw);
  },
  optionalString(env: string, describe: string, opts: { secret?: boolean } = {}): Setting<string | undefined> {
    return setting<string | undefined>(env, describe, { ...opts, default: undefined }, (raw) => raw);
  },
  int(env: string, describe: string, opts: Options<number> & { min?: number; max?: number } = {}): Setting<number> {
    return setting(env, describe, opts, (raw) => {
      if (!/^-?\d+$/.test(raw)) throw new Invalid(`${env} must be an integer, got "${raw}"`);
      const n = Number(raw);
      if (opts.min !== undefined && n < opts.min) throw new Invalid(`${env} must be at least ${opts.min}`);
      if (opts.max !== undefined && n > opts.max) throw new Invalid(`${env} must be at most ${opts.max}`);
      return n;
    });
  },
  bool(env: string, describe: string, opts: Options<boolean> = {}): Setting<boolean> {
    return setting(env, describe, opts, (raw) => {
      if (["true", "1", "yes"].includes(raw)) return true;
      if (["false", "0", "no"].includes(raw)) return false;
      throw new Invalid(`${env} must be true or false, got "${raw}"`);
    });
  },
  url(env: string, describe: string, opts: Options<string> = {}): Setting<string> {
    return setting(env, describe, opts, (raw) => {
      try {
        new URL(raw);
      } catch {
        throw new Invalid(`${env} must be a URL`);
      }
      return raw.replace(/\/+$/, "");
    });
  },
  oneOf<const V extends string>(env: string, describe: string, values: readonly V[], opts: Options<V> = {}): Setting<V> {
    return setting(env, describe, opts, (raw) => {
      if (!values.includes(raw as V)) throw new Invalid(`${env} must be one of ${values.join(", ")}, got "${raw}"`);
      return raw as V;
    });
  },
  list(env: string, describe: string, opts: Options<string[]> = {}): Setting<string[]> {
    return setting(env, describe, opts, (raw) =>
      raw
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    );
  },
};
export { setting$ as env };

export type ConfigSpec = Record<string, Setting<unknown>>;
export type ConfigOf<S extends ConfigSpec> = { readonly [K in keyof S]: S[K] extends Setting<infer T> ? T : never };

/** Reads and validates every setting; throws one ConfigError naming all problems. */
export function loadConfig<S extends ConfigSpec>(spec: S, source: Record<string, string | undefined> = process.env): ConfigOf<S> {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(spec)) {
    try {
      out[key] = s.read(source[s.env]);
    } catch (err) {
      if (err instanceof Invalid) problems.push(err.message);
      else throw err;
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as ConfigOf<S>;
}

/** The configuration as safe-to-log text values: secrets are masked. */
export function describeConfig<S extends ConfigSpec>(spec: S, config: ConfigOf<S>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, s] of Object.entries(spec)) {
    const value = (config as Record<string, unknown>)[key];
    if (value === undefined) continue;
    out[s.env] = s.secret ? "********" : maskUrlPassword(String(value));
  }
  return out;
}

function maskUrlPassword(value: string): string {
  return value.replace(/(\/\/[^:/@\s]+:)[^@/\s]+@/, "$1********@");
}
