import type { identityV1 } from "@c402/contracts";
import { isoOrNull } from "./values";

/** The public JSON shape of an account event row (GET /v1/account/events). */
export function accountEventView(e: identityV1.AccountEvent) {
  return {
    id: e.id,
    object: "account_event",
    action: e.action,
    object_id: e.objectId,
    detail: JSON.parse(e.detailJson) as Record<string, unknown>,
    actor: e.actor,
    test_mode: e.testMode,
    at: isoOrNull(e.at),
  };
}
