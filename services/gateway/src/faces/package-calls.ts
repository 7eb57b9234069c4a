import { ORIGIN_CALL_TIMEOUT_MS } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import type { GatewayDeps } from "../http/deps";
import { packageCallView, packageUsageView } from "../views/packages";
import type { FacePayments } from "./face-payments";

/** Counts one request of a key against a budget (it may refuse with 429); the key reaches it only as a digest. */
export type SpendBudget = (keyDigest: string) => Promise<void>;

/**
 * Package calls at a face, apart from HTTP (spec, Packages): a call
 * (`Authorization: Bearer <package_key>`) spent by fulfillment on the
 * checkout's origin, and the usage record (free). Each is counted against the
 * key's budget a minute first.
 */
export class PackageCalls {
  constructor(
    private readonly deps: Pick<GatewayDeps, "clients" | "settings">,
    private readonly payments: FacePayments,
    private readonly digestOf: (key: string) => string,
  ) {}

  /** One call: the origin's goods and what the package has left; a failure on the seller's side gives the call back (502). */
  async call(p: { checkoutId: string; key: string; params: Record<string, string>; spendBudget: SpendBudget }) {
    await p.spendBudget(this.digestOf(p.key));
    try {
      // Longer than the origin's own deadline: its outcome (the goods, or the call given back) is what the buyer hears.
      const r = await this.deps.clients.fulfillment.spendPackageCall(
        { checkoutId: p.checkoutId, packageKey: p.key, params: p.params },
        { timeoutMs: ORIGIN_CALL_TIMEOUT_MS },
      );
      return packageCallView(r, this.deps.settings.baseUrl);
    } catch (err) {
      if (err instanceof ProblemError) this.payments.withBuyerHints(err, p.checkoutId);
      throw err;
    }
  }

  /** The usage record, one page of its calls (free); 401 without a key. */
  async usage(p: { checkoutId: string; key: string | undefined; page: { size: number; before?: number }; spendBudget: SpendBudget }) {
    if (p.key === undefined) {
      throw new ProblemError("unauthenticated", {
        message: "The usage record is the package's: send its key.",
        help: { fix: "Send Authorization: Bearer <package_key>, the key the package purchase answered.", retry_is_safe: false },
      });
    }
    await p.spendBudget(this.digestOf(p.key));
    const r = await this.deps.clients.fulfillment.packageUsage({
      checkoutId: p.checkoutId,
      packageKey: p.key,
      pageSize: p.page.size,
      ...(p.page.before !== undefined ? { beforeSeq: p.page.before } : {}),
    });
    return packageUsageView(r, this.deps.settings.baseUrl, p.page.size);
  }
}
