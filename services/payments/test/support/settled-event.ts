import { fromBinary } from "@bufbuild/protobuf";
import { decodeEnvelope } from "@c402/bus";
import { paymentEventsV1 } from "@c402/contracts";
import type { Kysely } from "kysely";

/** The payment.settled event the payments outbox holds for a payment. */
export async function settledEventOf(db: Kysely<any>, paymentId: string): Promise<paymentEventsV1.PaymentSettled> {
  const row = await db.selectFrom("outbox").select(["payload"]).where("key", "=", paymentId).executeTakeFirstOrThrow();
  return fromBinary(paymentEventsV1.PaymentSettledSchema, decodeEnvelope(new Uint8Array(row.payload)).payload);
}
