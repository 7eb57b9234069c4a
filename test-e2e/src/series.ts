import { encodeHeader } from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { call, type Reply } from "./http";
import { signTypedJson, type TypedDataJson } from "./typed-data";

/** What a face's prepare answers for one period: the typed data to sign and the payload it goes into. */
interface PreparedPeriod {
  typed_data: TypedDataJson;
  payload_stub: { payload: Record<string, unknown> };
}

/** One period's payment: the payload stub with the buyer's signature of its typed data. */
export async function signedPeriod(buyer: PrivateKeyAccount, prepared: PreparedPeriod) {
  return { ...prepared.payload_stub, payload: { ...prepared.payload_stub.payload, signature: await signTypedJson(buyer, prepared.typed_data) } };
}

/** A series bought as a buyer's wallet buys it (ADR 20): prepared, period 0 and every held period signed, paid with {schedule}. */
export async function subscribe(
  face: string,
  buyer: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey()),
): Promise<{ buyer: PrivateKeyAccount; prepared: Record<string, any>; period0: object; schedule: object[]; paid: Reply }> {
  const prepared = await call("POST", `${face}/prepare`, { body: { payer: buyer.address } });
  if (prepared.status !== 200) throw new Error(`${face}/prepare answered ${prepared.status}: ${prepared.text}`);
  const period0 = await signedPeriod(buyer, prepared.body);
  const schedule = await Promise.all((prepared.body.schedule as PreparedPeriod[]).map((p) => signedPeriod(buyer, p)));
  const paid = await call("POST", `${face}/pay`, { headers: { "payment-signature": encodeHeader(period0 as never) }, body: { schedule } });
  return { buyer, prepared: prepared.body, period0, schedule, paid };
}

/** The seller's view of a series once `until` holds of it (polled; the schedules service takes its events moments apart). */
export async function seriesOnceIn(key: string, id: string, until: (s: Record<string, any>) => boolean, ms = 30_000): Promise<Record<string, any>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await call("GET", `/v1/schedules/${id}`, { key });
    if (got.status === 200 && until(got.body)) return got.body;
    if (Date.now() > deadline) throw new Error(`series ${id} never reached the state: ${JSON.stringify(got.body)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
