import { accountActivityRow, type AccountAction, type Actor } from "@c402/account-events";
import type { OutboxRow } from "@c402/bus";
import type { CheckoutRow } from "../store/catalog-store";

/**
 * The account event of a change to a checkout, as its outbox row (written in
 * the change's transaction). A checkout that is not armed only rehearses, so
 * its events are test-mode events.
 */
export function checkoutActivity(
  checkout: Pick<CheckoutRow, "id" | "account_id" | "armed">,
  change: { action: AccountAction; actor: Actor; at: Date; detail?: Record<string, unknown> },
): OutboxRow {
  return accountActivityRow({
    accountId: checkout.account_id,
    action: change.action,
    objectId: checkout.id,
    detail: change.detail ?? {},
    actor: change.actor,
    testMode: !checkout.armed,
    at: change.at,
  });
}
