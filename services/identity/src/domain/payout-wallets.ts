import type { Actor } from "@c402/account-events";
import { CHAIN_FAMILY, chainOfFamily, checkPayoutAddress, PAYOUT_CHAINS, payoutChange } from "@c402/chain-addresses";
import { invalid, ProblemError, type FieldError } from "@c402/problems";
import type { IdentityDb, PayoutWalletRow } from "../store/identity-store";
import { payoutWalletStore as store } from "../store/payout-wallet-store";
import { recordActivity } from "./account-events";

/**
 * An account's standing payout wallets (PUT /v1/account/wallets): at most one
 * per chain family, the `is_default` row, which a checkout copies at create.
 * A PUT replaces the whole standing set. A wallet a sign-in verified is a
 * credential as well as a payout wallet: a PUT never removes it and never
 * changes its flag; when the PUT names no address for its family, it is the
 * standing wallet again. An address a PUT names is stored unverified (nobody
 * proved they control it; it only receives). Existing checkouts keep what they
 * copied: nothing here reaches them.
 */

/** The stored families, in the order answers list them (eip155, solana, stellar). */
const FAMILIES = PAYOUT_CHAINS.map((c) => CHAIN_FAMILY[c]);

/** What a PUT did (or would do) to one family's standing wallet. */
export interface WalletChange {
  chainFamily: string;
  before: string | null;
  after: string | null;
}

export interface WalletsOutcome {
  /** The account's wallets after the change (or as they would be, for a dry run), oldest first. */
  wallets: PayoutWalletRow[];
  /** One entry per family, in FAMILIES order. */
  changes: WalletChange[];
  changed: boolean;
}

/** The standing address of each family: its default row's. */
function standingOf(rows: readonly PayoutWalletRow[]): Map<string, string> {
  return new Map(rows.filter((r) => r.is_default).map((r) => [r.chain_family, r.address]));
}

/**
 * The addresses a PUT names, checked and normalised per family (EVM
 * checksummed); 422 naming each refused one by its REST chain name (base,
 * solana, stellar), which is what the client sent.
 */
export function checkStandingInput(input: Readonly<Record<string, string>>): Map<string, string> {
  const errors: FieldError[] = [];
  const out = new Map<string, string>();
  for (const [family, text] of Object.entries(input)) {
    const chain = chainOfFamily(family);
    if (!chain) {
      errors.push({ field: family, reason: `is not a chain this service pays out on (${PAYOUT_CHAINS.join(", ")})` });
      continue;
    }
    const checked = checkPayoutAddress(chain, text);
    if (checked.ok) out.set(family, checked.address);
    else errors.push({ field: chain, reason: checked.reason });
  }
  if (errors.length) throw invalid(errors, "A payout wallet is not a valid address for its chain.");
  return out;
}

/**
 * The standing set after a PUT: the named address, else the family's
 * verified wallet (the current default if it is one, else the oldest), else none.
 */
function nextStanding(rows: readonly PayoutWalletRow[], named: ReadonlyMap<string, string>): Map<string, string> {
  const current = standingOf(rows);
  const next = new Map<string, string>();
  for (const family of FAMILIES) {
    const verified = rows.filter((r) => r.chain_family === family && r.verified);
    const address = named.get(family) ?? verified.find((r) => r.address === current.get(family))?.address ?? verified[0]?.address;
    if (address !== undefined) next.set(family, address);
  }
  return next;
}

/** The rows once `next` stands: verified rows stay, other rows only if they stand, new addresses join unverified. */
function rowsAfter(accountId: string, rows: readonly PayoutWalletRow[], next: ReadonlyMap<string, string>): PayoutWalletRow[] {
  const kept = rows
    .filter((r) => r.verified || next.get(r.chain_family) === r.address)
    .map((r) => ({ ...r, is_default: next.get(r.chain_family) === r.address }));
  const added = [...next]
    .filter(([family, address]) => !rows.some((r) => r.chain_family === family && r.address === address))
    .map(([family, address]) => ({ account_id: accountId, chain_family: family, address, verified: false, is_default: true }));
  return [...kept, ...added];
}

export class PayoutWallets {
  constructor(
    private readonly db: IdentityDb,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Replaces the standing set with the addresses `input` names by family
   * (a family not named falls back to its verified wallet, or has none).
   * A dry run answers the same and writes nothing (the preview). One
   * `wallets.updated` account event, in the change's transaction, when
   * anything changed.
   */
  async put(accountId: string, input: Readonly<Record<string, string>>, actor: Actor, options: { dryRun?: boolean } = {}): Promise<WalletsOutcome> {
    const named = checkStandingInput(input);
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      if (!(await store.lockAccount(trx, accountId))) throw new ProblemError("not-found", "No such account.");
      const rows = await store.list(trx, accountId);
      const before = standingOf(rows);
      const next = nextStanding(rows, named);
      const changes = FAMILIES.map((family) => ({ chainFamily: family, before: before.get(family) ?? null, after: next.get(family) ?? null }));
      const changed = changes.some((c) => c.before !== c.after);
      if (options.dryRun || !changed) return { wallets: options.dryRun ? rowsAfter(accountId, rows, next) : rows, changes, changed };

      await store.clearDefaults(trx, accountId);
      for (const r of rows) if (!r.verified && next.get(r.chain_family) !== r.address) await store.removeUnverified(trx, r);
      for (const [family, address] of next) await store.makeDefault(trx, { account_id: accountId, chain_family: family, address });
      await recordActivity(trx, {
        accountId,
        action: "wallets.updated",
        objectId: accountId,
        detail: walletsDetail(changes),
        actor,
        testMode: false,
        at: now,
      });
      return { wallets: await store.list(trx, accountId), changes, changed };
    });
  }
}

/** The account event's detail, in the REST API's words: the standing address per chain, and what changed. */
function walletsDetail(changes: readonly WalletChange[]) {
  const wallets: Record<string, string | null> = {};
  const changed: Record<string, string> = {};
  for (const c of changes) {
    const chain = chainOfFamily(c.chainFamily) ?? c.chainFamily;
    wallets[chain] = c.after;
    if (c.before !== c.after) changed[chain] = payoutChange(c.before, c.after);
  }
  return { wallets, changes: changed };
}
