import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { x402Facilitator } from "@x402/core/facilitator";
import { decodePaymentSignatureHeader, encodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequirements } from "@x402/core/types";

/**
 * A v1 x402 seller as `x402-express` 1.x behaves (x402-interop.md §6.3): a 402
 * with the JSON body `{x402Version: 1, error, accepts}` naming the network
 * ("base-sepolia"), the payment read from `X-PAYMENT`, verified and settled
 * by the official facilitator's v1 scheme, the settlement in
 * `X-PAYMENT-RESPONSE`. Small enough to write here rather than install the
 * v1 packages (~465 of them) for one test.
 */
export interface V1Requirement {
  network: string;
  maxAmountRequired: string;
  payTo: string;
  asset: string;
  extra: Record<string, unknown>;
}

export async function startV1Seller(facilitator: x402Facilitator, requirement: V1Requirement): Promise<{ url: string; close(): Promise<void> }> {
  let url = "";
  const accepts = () => ({
    scheme: "exact",
    description: "",
    mimeType: "application/json",
    resource: url,
    maxTimeoutSeconds: 60,
    ...requirement,
  });
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const header = req.headers["x-payment"];
    if (typeof header !== "string") return json(res, 402, { x402Version: 1, error: "X-PAYMENT header is required", accepts: [accepts()] });
    const payload = decodePaymentSignatureHeader(header);
    // v1 requirements carry maxAmountRequired where v2 has amount: the facilitator's v1 scheme reads them as they are.
    const required = accepts() as unknown as PaymentRequirements;
    const verified = await facilitator.verify(payload, required);
    if (!verified.isValid) return json(res, 402, { x402Version: 1, error: verified.invalidReason, accepts: [accepts()] });
    const settled = await facilitator.settle(payload, required);
    if (!settled.success) return json(res, 402, { x402Version: 1, error: settled.errorReason, accepts: [accepts()] });
    json(res, 200, { goods: "v1 answer" }, { "X-PAYMENT-RESPONSE": encodePaymentResponseHeader(settled) });
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => json(res, 500, { error: "seller failed" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1-goods`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
