import type { Logger } from "@c402/logging";
import { ProblemError } from "@c402/problems";
import { rpcFailureLog } from "../src";

describe("rpcFailureLog", () => {
  function capture() {
    const lines: { level: string; fields: Record<string, unknown> }[] = [];
    const at = (level: string) => (fields: Record<string, unknown>) => void lines.push({ level, fields });
    return { lines, logger: { debug: at("debug"), error: at("error") } as unknown as Logger };
  }

  it("logs a refusal of the caller's making (4xx problem) at debug, without the error object", () => {
    const { lines, logger } = capture();
    rpcFailureLog(logger)(
      new ProblemError("payment-required", { message: "no", extensions: { reason: "invalid_payload" } }),
      "payments.v1.PaymentsService/SubmitPayment",
    );
    expect(lines).toEqual([
      { level: "debug", fields: { method: "payments.v1.PaymentsService/SubmitPayment", problem: "payment-required", reason: "invalid_payload" } },
    ]);
  });

  it("logs anything else at error, with the error", () => {
    const { lines, logger } = capture();
    const boom = new Error("boom");
    rpcFailureLog(logger)(boom, "m");
    rpcFailureLog(logger)(new ProblemError("internal", "broken"), "m");
    expect(lines.map((l) => l.level)).toEqual(["error", "error"]);
    expect(lines[0]!.fields.err).toBe(boom);
  });
});
