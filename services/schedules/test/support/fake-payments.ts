import { paymentsV1, type paymentEventsV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import { createClient, RpcServer, type ServiceClient, type ServiceImplementation } from "@c402/rpc";

type Outcome = { outcome: paymentsV1.ChargeOutcome; reason?: string };

/**
 * Stands in for payments (which has its own tests of ChargeHeldPeriod and
 * CancelHeldAuthorizations): served over real gRPC on loopback, it answers
 * each period from a script (SETTLED when nothing is scripted), records every
 * call, and notes any period asked twice at the same time.
 */
export class FakePayments {
  readonly calls: { scheduleId: string; period: number }[] = [];
  readonly overlaps: string[] = [];
  readonly cancelCalls: paymentsV1.CancelHeldAuthorizationsRequest[] = [];
  /** How long each charge takes. */
  delayMs = 0;
  /** Period 0's payment.settled of the series payments "sold" (GetSeriesStart); any other id is NOT_FOUND. */
  readonly starts = new Map<string, paymentEventsV1.PaymentSettled>();
  /** Every charge throws this (payments unreachable) while set. */
  unavailable = false;
  private readonly scripts = new Map<string, Outcome[]>();
  private readonly inFlight = new Set<string>();
  private server?: RpcServer;
  client!: ServiceClient<typeof paymentsV1.PaymentsService>;

  /** The answers of the next charges of one period, in order; the last one repeats. */
  script(scheduleId: string, period: number, ...outcomes: Outcome[]): void {
    this.scripts.set(`${scheduleId}/${period}`, outcomes);
  }

  callsOf(scheduleId: string, period?: number) {
    return this.calls.filter((c) => c.scheduleId === scheduleId && (period === undefined || c.period === period));
  }

  async start(): Promise<void> {
    const impl: Partial<ServiceImplementation<typeof paymentsV1.PaymentsService>> = {
      chargeHeldPeriod: async (req) => {
        const key = `${req.scheduleId}/${req.period}`;
        this.calls.push({ scheduleId: req.scheduleId, period: req.period });
        if (this.inFlight.has(key)) this.overlaps.push(key);
        this.inFlight.add(key);
        try {
          if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
          if (this.unavailable) throw new Error("payments is down");
          const script = this.scripts.get(key) ?? [];
          const next = script.length > 1 ? (script.shift() as Outcome) : (script[0] ?? { outcome: paymentsV1.ChargeOutcome.SETTLED });
          return next.outcome === paymentsV1.ChargeOutcome.SETTLED
            ? { outcome: next.outcome, paymentId: `pay_${req.scheduleId}_${req.period}` }
            : { outcome: next.outcome, ...(next.reason ? { reason: next.reason } : {}) };
        } finally {
          this.inFlight.delete(key);
        }
      },
      getSeriesStart: async (req) => {
        const settled = this.starts.get(req.scheduleId);
        if (!settled) throw new ProblemError("not-found", "No such series.");
        return { settled };
      },
      cancelHeldAuthorizations: async (req) => {
        this.cancelCalls.push(req);
        return { results: req.cancels.map((c, i) => ({ nonce: c.nonce, period: i + 1, status: "cancelled", txHash: `0x${"ab".repeat(32)}` })) };
      },
    };
    // Every other method of payments is not part of this stand-in.
    const notHere = async () => {
      throw new Error("not implemented by the stand-in for payments");
    };
    const full = Object.fromEntries(paymentsV1.PaymentsService.methods.map((m) => [m.localName, (impl as Record<string, unknown>)[m.localName] ?? notHere]));
    this.server = new RpcServer();
    this.server.add(paymentsV1.PaymentsService, full as ServiceImplementation<typeof paymentsV1.PaymentsService>);
    const port = await this.server.listen("127.0.0.1", 0);
    this.server.serving();
    this.client = createClient(paymentsV1.PaymentsService, `127.0.0.1:${port}`);
  }

  async stop(): Promise<void> {
    this.client?.close();
    await this.server?.stop(1_000);
  }
}
