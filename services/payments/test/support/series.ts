import { cancelAuthorizationTypedData, encodeHeader, preparedPayment, tokenDomainOf, type ExactEvmAuthorization, type PaymentRequirements } from "@c402/x402";
import { parseSignature, type Hex, type LocalAccount } from "viem";
import type { Payments, Prepared } from "../../src/domain/payments";
import type { Face } from "../../src/domain/requirements";

/** The payment header a buyer's wallet makes of one prepared authorization (period 0's or a held period's). */
export async function signedHeader(buyer: LocalAccount, requirement: PaymentRequirements, authorization: ExactEvmAuthorization): Promise<string> {
  const prepared = preparedPayment(requirement, authorization, "http://127.0.0.1:4020/c/x");
  const m = prepared.typedData.message;
  const signature = await buyer.signTypedData({
    domain: prepared.typedData.domain,
    types: { TransferWithAuthorization: prepared.typedData.types.TransferWithAuthorization },
    primaryType: "TransferWithAuthorization",
    message: { ...m, value: BigInt(m.value), validAfter: BigInt(m.validAfter), validBefore: BigInt(m.validBefore), nonce: m.nonce as Hex },
  });
  return encodeHeader({ ...prepared.payloadStub, payload: { ...prepared.payloadStub.payload, signature } });
}

/** A series purchase as a buyer's wallet makes it: prepare, then period 0's header and one per held period, signed as prepared. */
export async function preparedSeries(payments: Payments, checkoutId: string, face: Face, buyer: LocalAccount) {
  const prepared = await payments.prepare(checkoutId, face, { payer: buyer.address });
  const authorization = prepared.authorization as ExactEvmAuthorization;
  const header = await signedHeader(buyer, prepared.requirement, authorization);
  const held = await Promise.all((prepared.schedule ?? []).map((h) => signedHeader(buyer, prepared.requirement, h.authorization)));
  return { prepared: prepared as Prepared & { authorization: ExactEvmAuthorization }, header, held };
}

/** The payer's USDC CancelAuthorization for a held nonce, as v, r, s. */
export async function signedCancel(signer: LocalAccount, requirement: PaymentRequirements, payer: string, nonce: string) {
  const typed = cancelAuthorizationTypedData(tokenDomainOf(requirement), payer, nonce);
  const signature = await signer.signTypedData({
    domain: typed.domain,
    types: { CancelAuthorization: typed.types.CancelAuthorization },
    primaryType: "CancelAuthorization",
    message: { authorizer: typed.message.authorizer, nonce: typed.message.nonce },
  });
  const { r, s, v, yParity } = parseSignature(signature);
  return { nonce, r, s, v: Number(v ?? BigInt(27 + yParity)) };
}
