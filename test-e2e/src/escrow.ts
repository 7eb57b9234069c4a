import { parseSignature } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { call, type Reply } from "./http";
import { signTypedJson, type TypedDataJson } from "./typed-data";

/** What POST /e/{id}/actions/{action} answers that a signer needs: the typed data and its deadline. */
interface PreparedAction {
  typed_data: TypedDataJson;
  deadline: number;
}

/** The body of an escrow action's submit: the action's typed data signed by `signer`, split into v, r, s, with its deadline. */
export async function signedEscrowAction(signer: PrivateKeyAccount, prepared: PreparedAction) {
  const { v, r, s } = parseSignature(await signTypedJson(signer, prepared.typed_data));
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

/** A seller's escrow checkout (POST /v1/escrow-checkouts) with a fresh EVM arbiter; `body` adds or overrides create fields. */
export async function newEscrowCheckout(key: string, body: Record<string, unknown> = {}): Promise<{ id: string; url: string; test_url: string }> {
  const r = await call("POST", "/v1/escrow-checkouts", {
    key,
    body: {
      title: "Vintage lamp",
      price_usd: "2.00",
      payload: { tracking: "1Z999" },
      escrow_preset: "standard",
      arbiter_evm: privateKeyToAccount(generatePrivateKey()).address,
      ...body,
    },
  });
  if (r.status !== 201) throw new Error(`escrow checkout create failed: ${r.status} ${r.text}`);
  return r.body;
}
