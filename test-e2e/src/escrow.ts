import { parseSignature, type Hex } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { call, type Reply } from "./http";

/** What POST /e/{id}/actions/{action} answers that a signer needs: the typed data and its deadline. */
interface PreparedAction {
  typed_data: {
    domain: Record<string, unknown>;
    types: Record<string, { name: string; type: string }[]>;
    primaryType: string;
    message: Record<string, unknown>;
  };
  deadline: number;
}

/** The body of an escrow action's submit: the action's typed data signed by `signer`, split into v, r, s, with its deadline. */
export async function signedEscrowAction(signer: PrivateKeyAccount, prepared: PreparedAction) {
  const { EIP712Domain: _domain, ...types } = prepared.typed_data.types;
  const m = prepared.typed_data.message;
  const signature = await signer.signTypedData({
    domain: prepared.typed_data.domain,
    types,
    primaryType: prepared.typed_data.primaryType,
    message: { ...m, action: Number(m.action), nonce: BigInt(m.nonce as string), deadline: BigInt(m.deadline as string) },
  } as Parameters<PrivateKeyAccount["signTypedData"]>[0]);
  const { v, r, s } = parseSignature(signature as Hex);
  return { v: Number(v), r, s, deadline: prepared.deadline };
}

/** A buyer's (or, for cancel, the seller's) action on an escrow, as a wallet takes it: prepared, signed by `signer`, relayed. */
export async function actOnEscrow(
  checkoutId: string,
  paymentId: string,
  action: string,
  signer: PrivateKeyAccount,
): Promise<{ prepared: Reply; submitted: Reply }> {
  const prepared = await call("POST", `/e/${checkoutId}/actions/${action}?payment_id=${paymentId}`);
  if (prepared.status !== 200) return { prepared, submitted: prepared };
  const submitted = await call("POST", `/e/${checkoutId}/actions/${action}/submit?payment_id=${paymentId}`, {
    body: await signedEscrowAction(signer, prepared.body as PreparedAction),
  });
  return { prepared, submitted };
}
