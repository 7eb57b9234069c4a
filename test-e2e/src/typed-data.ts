import type { PrivateKeyAccount } from "viem/accounts";

/** Typed data as the service answers it (JSON: integers as decimal text or numbers, the EIP712Domain type included). */
export interface TypedDataJson {
  domain: Record<string, unknown>;
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, unknown>;
}

/** Signs typed data the service answered as a wallet does (eth_signTypedData_v4): its uint fields as integers. */
export function signTypedJson(signer: PrivateKeyAccount, typed: TypedDataJson): Promise<`0x${string}`> {
  const { EIP712Domain: _domain, ...types } = typed.types;
  const fields = types[typed.primaryType] ?? [];
  const message = Object.fromEntries(
    Object.entries(typed.message).map(([k, v]) => [k, fields.find((f) => f.name === k)?.type.startsWith("uint") ? BigInt(v as string) : v]),
  );
  return signer.signTypedData({ domain: typed.domain, types, primaryType: typed.primaryType, message } as Parameters<PrivateKeyAccount["signTypedData"]>[0]);
}
