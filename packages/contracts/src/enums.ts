import { CheckoutStatus } from "./gen/catalog/v1/catalog_pb";

/**
 * The wire enums as the words the JSON API and the services' domains use,
 * both ways, in one place (each service used to keep its own map).
 */
export type CheckoutStatusName = "open" | "paid" | "expired" | "void";

const CHECKOUT_STATUS_BY_NAME: Record<CheckoutStatusName, CheckoutStatus> = {
  open: CheckoutStatus.OPEN,
  paid: CheckoutStatus.PAID,
  expired: CheckoutStatus.EXPIRED,
  void: CheckoutStatus.VOID,
};

export function checkoutStatusToProto(name: CheckoutStatusName): CheckoutStatus {
  return CHECKOUT_STATUS_BY_NAME[name];
}

/** The name of a checkout status; undefined for UNSPECIFIED or a value this build does not know. */
export function checkoutStatusName(status: CheckoutStatus): CheckoutStatusName | undefined {
  return (Object.keys(CHECKOUT_STATUS_BY_NAME) as CheckoutStatusName[]).find((name) => CHECKOUT_STATUS_BY_NAME[name] === status);
}
