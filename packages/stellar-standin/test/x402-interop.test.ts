import { Keypair, rpc, scValToNative, xdr } from "@stellar/stellar-sdk";
import { createEd25519Signer } from "@x402/stellar";
import { ExactStellarScheme as ExactStellarClientScheme } from "@x402/stellar/exact/client";
import { ExactStellarScheme as ExactStellarFacilitatorScheme } from "@x402/stellar/exact/facilitator";
import { startStellarStandin, trustCertificateInThisProcess, type StellarStandin } from "../src";
import { refuseStellarOrgLookups } from "./offline-horizon";

/**
 * The interop proof: the official x402 Stellar client and facilitator (2.9),
 * pointed at the stand-in's URL, build, verify and settle an exact payment in
 * USDC as they would on Stellar testnet.
 */
describe("the official @x402/stellar client and facilitator on the stand-in", () => {
  let standin: StellarStandin;
  let untrust: () => void;
  let horizon: ReturnType<typeof refuseStellarOrgLookups>;

  beforeAll(async () => {
    standin = await startStellarStandin({ ledgerMs: 500 });
    untrust = trustCertificateInThisProcess(standin.caCertificatePem);
    horizon = refuseStellarOrgLookups();
  });

  afterAll(async () => {
    horizon.restore();
    untrust();
    await standin.close();
  });

  it("builds, verifies and settles an exact USDC payment: balances move by the amount exactly, one transfer event", async () => {
    const [buyer, seller, facilitatorKey] = [Keypair.random(), Keypair.random(), Keypair.random()];
    for (const account of [buyer, seller, facilitatorKey]) standin.fundAccount(account.publicKey());
    standin.mintUsdc(buyer.publicKey(), 50_000_000n);
    standin.mintUsdc(seller.publicKey(), 0n);

    const facilitator = new ExactStellarFacilitatorScheme([createEd25519Signer(facilitatorKey.secret(), "stellar:testnet")], {
      rpcConfig: { url: standin.url },
    });
    const requirements = {
      scheme: "exact",
      network: standin.network,
      asset: standin.usdc,
      amount: "12500000",
      payTo: seller.publicKey(),
      maxTimeoutSeconds: 60,
      extra: { areFeesSponsored: true },
    };
    expect(facilitator.getExtra(standin.network)).toEqual(requirements.extra);

    const client = new ExactStellarClientScheme(createEd25519Signer(buyer.secret(), "stellar:testnet"), { url: standin.url });
    const created = await client.createPaymentPayload(2, requirements);
    const payload = { ...created, accepted: requirements, resource: { url: "http://127.0.0.1/paid", description: "", mimeType: "application/json" } };

    // The client asked Horizon for the ledger time (unreachable here: it took 5 s a ledger), and only then the stand-in.
    expect(horizon.refused).toContain("horizon-testnet.stellar.org");
    expect(await facilitator.verify(payload, requirements)).toEqual({ isValid: true, payer: buyer.publicKey() });

    const feesBefore = standin.xlmBalance(facilitatorKey.publicKey())!;
    const settled = await facilitator.settle(payload, requirements);
    expect(settled).toMatchObject({ success: true, network: "stellar:testnet", payer: buyer.publicKey() });
    expect(standin.usdcBalance(buyer.publicKey())).toBe(37_500_000n);
    expect(standin.usdcBalance(seller.publicKey())).toBe(12_500_000n);
    expect(standin.transfers()).toEqual([
      expect.objectContaining({ hash: settled.transaction, from: buyer.publicKey(), to: seller.publicKey(), amount: 12_500_000n }),
    ]);
    // The facilitator's account paid the fee and used one sequence number; the buyer paid nothing in XLM.
    expect(standin.xlmBalance(facilitatorKey.publicKey())!).toBeLessThan(feesBefore);
    expect(standin.xlmBalance(buyer.publicKey())).toBe(100_000_000_000n);

    // What a rail reads back through stellar-sdk 15's rpc.Server: SUCCESS, and exactly one transfer event.
    const server = new rpc.Server(standin.url);
    const found = await server.getTransaction(settled.transaction);
    expect(found.status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
    if (found.status !== rpc.Api.GetTransactionStatus.SUCCESS) return;
    const transferEvents = found.events.contractEventsXdr
      .flat()
      .filter((event: xdr.ContractEvent) => scValToNative(event.body().v0().topics()[0]!) === "transfer");
    expect(transferEvents).toHaveLength(1);
    const [topic, from, to, asset] = transferEvents[0]!
      .body()
      .v0()
      .topics()
      .map((value) => scValToNative(value));
    expect({ topic, from, to, asset, amount: scValToNative(transferEvents[0]!.body().v0().data()) }).toEqual({
      topic: "transfer",
      from: buyer.publicKey(),
      to: seller.publicKey(),
      asset: "USDC:GBBD47IF6LWK7P7MDEVSCWR7DPUWV3NY3DTQEVFL4NAT4AQH3ZLLFLA5",
      amount: 12_500_000n,
    });
    expect(found.resultMetaXdr.v4().operations()[0]!.events()).toHaveLength(1);

    // The same payment settled again is refused (its nonce is spent: the simulation says so), and moves nothing.
    const logged = jest.spyOn(console, "error").mockImplementation(() => undefined);
    const again = await facilitator.settle(payload, requirements);
    const messages = logged.mock.calls.map((call) => call.join(" "));
    logged.mockRestore();
    expect(again).toMatchObject({ success: false, errorReason: "invalid_exact_stellar_payload_simulation_failed" });
    expect(messages).toEqual([expect.stringMatching(/^Simulation error: .*nonce .* already used/)]);
    expect(standin.usdcBalance(seller.publicKey())).toBe(12_500_000n);
    expect(standin.transfers()).toHaveLength(1);
  }, 60_000);
});
