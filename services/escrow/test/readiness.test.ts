import type { GasReader } from "../src/chain/gas-reader";
import { arbiterReadiness, MAX_RULINGS_COUNTED, RULING_GAS, rulingsAffordable } from "../src/domain/readiness";
import { DEFAULT_ESCROW_SETTINGS } from "../src/domain/settings";

const EVM = "0x000000000000000000000000000000000000dEaD";
const SOLANA = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const GWEI = 1_000_000_000n;

function reader(balance: bigint, gasPrice: bigint, fail = false): GasReader & { asked: string[] } {
  const asked: string[] = [];
  return {
    network: "eip155:84532",
    asked,
    async balanceOf(address) {
      asked.push(address);
      if (fail) throw new Error("connect ECONNREFUSED");
      return balance;
    },
    gasPrice: async () => gasPrice,
  };
}

/** Whether an account's arbiters can rule (spec, GET /v1/account/escrow/readiness). */
describe("arbiter readiness", () => {
  it("counts the rulings a balance pays gas for at the gas price, rounding down", () => {
    expect(rulingsAffordable(0n, GWEI)).toBe(0);
    expect(rulingsAffordable(RULING_GAS * GWEI - 1n, GWEI)).toBe(0);
    expect(rulingsAffordable(RULING_GAS * GWEI * 3n, GWEI)).toBe(3);
    // A free network (gas price 0) is counted at 1 wei, and the count is capped.
    expect(rulingsAffordable(10n ** 30n, 0n)).toBe(MAX_RULINGS_COUNTED);
  });

  it("is null per family where no arbiter is named, and reads nothing then", async () => {
    const chain = reader(10n ** 18n, GWEI);
    expect(await arbiterReadiness(DEFAULT_ESCROW_SETTINGS, chain)).toEqual({ evm: null, svm: null });
    expect(chain.asked).toEqual([]);
  });

  it("reads the EVM arbiter's balance on the network; says when it cannot pay for a ruling", async () => {
    const settings = { ...DEFAULT_ESCROW_SETTINGS, arbiterEvm: EVM };
    const funded = await arbiterReadiness(settings, reader(RULING_GAS * 2n * GWEI, 2n * GWEI));
    expect(funded.evm).toEqual({
      arbiter: EVM,
      escrowOffered: true,
      network: "eip155:84532",
      gasBalance: RULING_GAS * 2n * GWEI,
      rulingsAffordable: 1,
      note: "This arbiter can pay for about 1 ruling at the current gas price (200000 gas each).",
    });
    const empty = await arbiterReadiness(settings, reader(0n, GWEI));
    expect(empty.evm).toMatchObject({ gasBalance: 0n, rulingsAffordable: 0, note: expect.stringMatching(/cannot pay for a ruling/) });
  });

  it("without a network, or when it does not answer, knows no balance and says why: never an error", async () => {
    const settings = { ...DEFAULT_ESCROW_SETTINGS, arbiterEvm: EVM };
    expect((await arbiterReadiness(settings, undefined)).evm).toMatchObject({
      network: null,
      gasBalance: null,
      rulingsAffordable: null,
      note: expect.stringMatching(/reads no EVM network/),
    });
    expect((await arbiterReadiness(settings, reader(0n, GWEI, true))).evm).toMatchObject({
      network: "eip155:84532",
      gasBalance: null,
      rulingsAffordable: null,
      note: expect.stringMatching(/did not answer/),
    });
  });

  it("states that Solana rulings use the service's gas, and that no Solana escrow rail is offered", async () => {
    const r = await arbiterReadiness({ ...DEFAULT_ESCROW_SETTINGS, arbiterSvm: SOLANA }, undefined);
    expect(r).toEqual({
      evm: null,
      svm: {
        arbiter: SOLANA,
        escrowOffered: false,
        rulingsUseServiceGas: true,
        note: expect.stringMatching(/^Solana rulings are broadcast on the service's gas.*not offered/),
      },
    });
  });
});
