/**
 * Child process: the reference setup built only from the official x402 2.27
 * packages. An Express app guarded by `@x402/express` paymentMiddleware, whose
 * FacilitatorClient is an in-process official facilitator (`x402Facilitator`
 * with the EVM `exact` facilitator scheme) signing with one devchain account.
 * The protected route sells the same thing as our checkout: the same atomic
 * amount of the same USDC on eip155:84532. With BENCH_SIMULATED_SETTLE=1 its
 * settle is simulated (see below).
 */
import { x402Facilitator } from "@x402/core/facilitator";
import { x402ResourceServer, type FacilitatorClient } from "@x402/core/server";
import type { SupportedResponse } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { registerExactEvmScheme as registerFacilitatorScheme } from "@x402/evm/exact/facilitator";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentMiddleware } from "@x402/express";
import { createPublicClient, createWalletClient, http, keccak256, nonceManager, toHex, type Chain, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { freePort, serveChild } from "../lib/child";
import { express } from "../lib/untyped";

export interface OfficialInfo {
  url: string;
  facilitator: Hex;
}

export const OFFICIAL_PATH = "/paid";

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

serveChild<OfficialInfo>(async () => {
  const rpcUrl = env("BENCH_RPC_URL");
  const network = "eip155:84532" as const;
  const chain: Chain = {
    id: 84532,
    name: network,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  };
  // One signer settling concurrently: viem's nonce manager keeps nonces locally, and sends go
  // through one queue (as ours signs through its nonce queue). Without the queue, transactions
  // reach the devchain out of nonce order and it refuses those that overtake a predecessor
  // ("Nonce provided for the transaction is higher than the next one expected").
  const account = privateKeyToAccount(env("BENCH_FACILITATOR_KEY") as Hex, { nonceManager });
  let sendQueue: Promise<unknown> = Promise.resolve();
  const serialized = <R>(send: () => Promise<R>): Promise<R> => {
    const run = sendQueue.then(send);
    sendQueue = run.catch(() => undefined);
    return run;
  };
  // Same receipt polling interval as our chain adapter (100 ms).
  const transport = http(rpcUrl, { retryCount: 0, timeout: 10_000 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const walletClient = createWalletClient({ account, chain, transport, pollingInterval: 100 });

  // The wiring the official facilitator example uses: a viem wallet + public client as the signer.
  const signer = toFacilitatorEvmSigner({
    address: account.address,
    getCode: (args) => publicClient.getCode(args),
    readContract: (args) => publicClient.readContract({ ...args, args: args.args ?? [] } as never),
    verifyTypedData: (args) => publicClient.verifyTypedData(args as never),
    writeContract: (args) => serialized(() => walletClient.writeContract({ ...args, args: args.args ?? [] } as never)),
    sendTransaction: (args) => serialized(() => walletClient.sendTransaction(args as never)),
    waitForTransactionReceipt: (args) => publicClient.waitForTransactionReceipt(args),
  });
  const facilitator = new x402Facilitator();
  registerFacilitatorScheme(facilitator, { signer, networks: network });
  // BENCH_SIMULATED_SETTLE=1: the official stack doing less than ours on the paid path (issue 16): verify
  // is real (the signature, the buyer's balance on the devchain), settle answers success without the chain,
  // and nothing is persisted anywhere.
  const simulated = process.env.BENCH_SIMULATED_SETTLE === "1";
  const facilitatorClient: FacilitatorClient = {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: simulated
      ? async (payload, requirements) => ({
          success: true,
          transaction: keccak256(toHex(JSON.stringify(payload.payload))),
          network: requirements.network,
          payer: (payload.payload as { authorization: { from: string } }).authorization.from,
        })
      : (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };

  const resourceServer = new x402ResourceServer(facilitatorClient).register(network, new ExactEvmScheme());
  const app = express();
  app.disable("x-powered-by");
  app.use(
    paymentMiddleware(
      {
        [`GET ${OFFICIAL_PATH}`]: {
          accepts: {
            scheme: "exact",
            network,
            payTo: env("BENCH_PAY_TO"),
            price: { amount: env("BENCH_AMOUNT"), asset: env("BENCH_ASSET"), extra: { name: "USDC", version: "2" } },
            maxTimeoutSeconds: 300,
          },
          description: "Live weather",
          mimeType: "application/json",
        },
      },
      resourceServer,
    ),
  );
  app.get(OFFICIAL_PATH, (_req, res) => res.json({ temp_c: 22 }));

  const port = await freePort();
  const server = await new Promise<import("node:http").Server>((resolve) => {
    const s = app.listen(port, "127.0.0.1", () => resolve(s));
  });
  server.keepAliveTimeout = 65_000;
  return {
    info: { url: `http://127.0.0.1:${port}${OFFICIAL_PATH}`, facilitator: account.address },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
});
