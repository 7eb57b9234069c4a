import type { Cache } from "@c402/cache";
import { framingOrigins } from "@c402/contracts";
import type { Response } from "express";
import type { ServiceClients } from "./deps";

/** How long a gateway trusts the list it read; a PUT through any gateway writes the new list at once. */
const CACHED_SECONDS = 60;
const keyOf = (accountId: string) => `embed-origins:${accountId}`;

/**
 * The origins allowed to frame an account's pay pages and receipts (spec,
 * Embedding), read from identity and kept in the shared cache. A cache that
 * cannot answer is passed over: the list is read from identity.
 */
export class EmbedOrigins {
  constructor(
    private readonly clients: Pick<ServiceClients, "identity">,
    private readonly cache: Cache,
  ) {}

  async of(accountId: string): Promise<string[]> {
    const cached = await this.cache.get(keyOf(accountId)).catch(() => null);
    if (cached !== null) return JSON.parse(cached) as string[];
    const r = await this.clients.identity.getEmbedSettings({ accountId });
    await this.remember(accountId, r.embedOrigins);
    return r.embedOrigins;
  }

  async remember(accountId: string, origins: readonly string[]): Promise<void> {
    await this.cache.set(keyOf(accountId), JSON.stringify(origins), CACHED_SECONDS).catch(() => undefined);
  }
}

/**
 * Lets the allowlisted origins frame this page: `frame-ancestors` names them
 * and X-Frame-Options (which cannot name an origin) goes. Only the origins
 * the framing rule accepts are named (@c402/contracts framingOrigins), so one
 * stored before the rule, a wildcard say, never reaches the header. With
 * none the face headers stand: nothing may frame.
 */
export function allowFraming(res: Response, origins: readonly string[]): void {
  const sources = framingOrigins(origins);
  if (sources.length === 0) return;
  res.removeHeader("X-Frame-Options");
  res.setHeader("Content-Security-Policy", `frame-ancestors ${sources.join(" ")}`);
}
