/**
 * What the demo buyer scripts share: typed data as the service answers it
 * (JSON, integers as decimal text) made signable by a wallet, and a JSON POST
 * that fails loudly with the service's answer.
 */
import type { TypedDataDefinition } from "viem";

export interface TypedDataJson {
  domain: TypedDataDefinition["domain"];
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, unknown>;
}

/** JSON typed data with its integers as the bigints a signer takes (uint fields come as decimal text or numbers). */
export function signable(typed: TypedDataJson): TypedDataDefinition {
  const { EIP712Domain: _domain, ...types } = typed.types;
  const fields = types[typed.primaryType] ?? [];
  const message = Object.fromEntries(
    Object.entries(typed.message).map(([k, v]) => [k, fields.find((f) => f.name === k)?.type.startsWith("uint") ? BigInt(v as string) : v]),
  );
  return { domain: typed.domain, types, primaryType: typed.primaryType, message } as TypedDataDefinition;
}

/** POSTs `body` as JSON (none when undefined) and answers the JSON, or throws with the status and the answer. */
export async function postJson(url: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(url, {
    method: "POST",
    headers: { accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = (await r.json()) as Record<string, any>;
  if (!r.ok) throw new Error(`${url} answered ${r.status}: ${JSON.stringify(answer)}`);
  return answer;
}
