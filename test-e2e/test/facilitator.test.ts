import { TestUSDC } from "@c402/evm-contracts";
import { signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { createPublicClient, createWalletClient, http, type Hex } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { call } from "../src/http";

/** The x402 facilitator endpoints: supported, verify and settle a plain `exact` payment on the devchain. */
describe("facilitator /x402/base", () => {
  let rpcUrl: string;
  const usdc: Hex = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
  const funder = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 7 });
  const requirementFor = (payTo: string, amount = "250000"): PaymentRequirements => ({
    scheme: "exact",
    network: "eip155:84532",
    asset: usdc,
    amount,
    payTo,
    maxTimeoutSeconds: 120,
    extra: { name: "USDC", version: "2" },
  });

  beforeAll(async () => {
    rpcUrl = (await call("GET", "/health?deep=true")).body.devchain.url;
  });

  const pub = () => createPublicClient({ transport: http(rpcUrl) });
  const balance = (a: Hex) => pub().readContract({ address: usdc, abi: TestUSDC.abi, functionName: "balanceOf", args: [a] });

  it("lists the settleable kinds and its signer", async () => {
    const r = await call("GET", "/x402/base/supported");
    expect(r.status).toBe(200);
    expect(r.body.kinds).toEqual([{ x402Version: 2, scheme: "exact", network: "eip155:84532" }]);
    expect(r.body.signers["eip155:*"]).toHaveLength(1);
    expect((await call("GET", "/x402/solana/supported")).body.kinds).toEqual([]);
    expect((await call("GET", "/x402/tron/supported")).status).toBe(404);
  });

  it("verifies, settles once, and refuses the same authorization again", async () => {
    const buyer = privateKeyToAccount(generatePrivateKey());
    const payTo = privateKeyToAccount(generatePrivateKey()).address;
    const wallet = createWalletClient({ account: funder, transport: http(rpcUrl) });
    await pub().waitForTransactionReceipt({
      hash: await wallet.writeContract({ address: usdc, abi: TestUSDC.abi, functionName: "mint", args: [buyer.address, 1_000_000n], chain: null }),
    });
    const requirement = requirementFor(payTo);
    const payload = await signExactEvmPayment(buyer, requirement);
    const body = { network: "eip155:84532", requirement, payload };

    expect((await call("POST", "/x402/base/verify", { body })).body).toEqual({ isValid: true, payer: buyer.address });
    const settled = await call("POST", "/x402/base/settle", { body });
    expect(settled.body).toMatchObject({
      success: true,
      network: "eip155:84532",
      payer: buyer.address,
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(await balance(payTo)).toBe(250_000n);
    expect(await balance(buyer.address)).toBe(750_000n);
    const again = await call("POST", "/x402/base/settle", { body });
    expect(again.body).toMatchObject({ success: false, errorReason: "invalid_exact_evm_nonce_already_used", transaction: "" });
    expect(await balance(payTo)).toBe(250_000n);
  });

  it("answers invalid payments with a reason (HTTP 200), and bad requests with 422", async () => {
    const buyer = privateKeyToAccount(generatePrivateKey());
    const requirement = requirementFor(privateKeyToAccount(generatePrivateKey()).address);
    const payload = await signExactEvmPayment(buyer, requirement);
    const poor = await call("POST", "/x402/base/verify", { body: { network: "eip155:84532", requirement, payload } });
    expect(poor.body).toMatchObject({ isValid: false, invalidReason: "invalid_exact_evm_insufficient_balance" });
    const mismatch = await call("POST", "/x402/base/verify", { body: { network: "eip155:84532", requirement: { ...requirement, amount: "1" }, payload } });
    expect(mismatch.body).toMatchObject({ isValid: false });
    const otherNet = await call("POST", "/x402/base/verify", { body: { network: "eip155:8453", requirement, payload } });
    expect(otherNet.body).toMatchObject({ isValid: false, invalidReason: "invalid_network" });
    const bad = await call("POST", "/x402/base/verify", { body: { network: "mainnet", requirement } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: "network" }), { field: "payload", reason: "is required" }]));
  });
});
