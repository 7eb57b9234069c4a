import { createHmac } from "node:crypto";

/**
 * The buyer pseudonym: stable for the same wallet and seller, different across
 * sellers, not reversible without the service's secret.
 */
export function subjectFor(secret: string, sellerAccountId: string, payer: string): string {
  const mac = createHmac("sha256", secret).update(`${sellerAccountId}\u0000${payer.toLowerCase()}`).digest("hex");
  return `sub_${mac.slice(0, 32)}`;
}
