import { generateKeyPairSigner } from "@solana/kit";
import { toClientSvmSigner, toFacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme as ExactSvmClientScheme } from "@x402/svm/exact/client";
import { ExactSvmScheme as ExactSvmFacilitatorScheme } from "@x402/svm/exact/facilitator";
import { startSolanaDevnet, type SolanaDevnet } from "../src";

/**
 * The interop proof: the official x402 SVM client and facilitator (2.27),
 * pointed at this devnet's URL, pay and settle an exact payment in devnet USDC
 * as they would on Solana devnet.
 */
describe("the official @x402/svm client and facilitator on the devnet", () => {
  let devnet: SolanaDevnet;

  beforeAll(async () => {
    devnet = await startSolanaDevnet();
  });

  afterAll(async () => {
    await devnet.close();
  });

  it("builds, verifies and settles an exact USDC payment: balances move by the amount exactly", async () => {
    const [buyer, seller, facilitatorKey] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner(), generateKeyPairSigner()]);
    await devnet.airdrop(facilitatorKey.address, 1_000_000_000n);
    await devnet.setTokenBalance(buyer.address, 5_000_000n);
    await devnet.setTokenBalance(seller.address, 0n);

    const facilitatorSigner = toFacilitatorSvmSigner(facilitatorKey, { defaultRpcUrl: devnet.url });
    const facilitator = new ExactSvmFacilitatorScheme(facilitatorSigner);
    const requirements = {
      scheme: "exact",
      network: devnet.network,
      asset: devnet.usdcMint,
      amount: "1250000",
      payTo: seller.address,
      maxTimeoutSeconds: 60,
      extra: { feePayer: facilitatorKey.address },
    };
    expect(facilitator.getExtra(devnet.network)).toEqual(requirements.extra);

    const client = new ExactSvmClientScheme(toClientSvmSigner(buyer), { rpcUrl: devnet.url });
    const created = await client.createPaymentPayload(2, requirements);
    const payload = { ...created, accepted: requirements, resource: { url: "http://127.0.0.1/paid", description: "", mimeType: "application/json" } };

    const verified = await facilitator.verify(payload, requirements);
    expect(verified).toMatchObject({ isValid: true, payer: buyer.address });

    const feePayerBefore = await rpcBalance(devnet.url, facilitatorKey.address);
    const settled = await facilitator.settle(payload, requirements);
    expect(settled).toMatchObject({ success: true, network: devnet.network, payer: buyer.address });
    expect(await devnet.tokenBalance(buyer.address)).toBe(3_750_000n);
    expect(await devnet.tokenBalance(seller.address)).toBe(1_250_000n);
    // The facilitator paid the fee: a signature each (buyer and fee payer) and the client's priority fee.
    expect(await rpcBalance(devnet.url, facilitatorKey.address)).toBeLessThan(feePayerBefore);

    // The same payment settled again is refused, and moves nothing.
    const again = await facilitator.settle(payload, requirements);
    expect(again.success).toBe(false);
    expect(await devnet.tokenBalance(seller.address)).toBe(1_250_000n);
  }, 60_000);
});

async function rpcBalance(url: string, account: string): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getBalance", params: [account] }),
  });
  return ((await res.json()) as { result: { value: number } }).result.value;
}
