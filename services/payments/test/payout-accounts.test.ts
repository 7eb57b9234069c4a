import { createServer, type AddressInfo } from "node:net";
import { ProblemError } from "@c402/problems";
import { newSolanaKeyPair, startSolanaDevnet, type SolanaDevnet } from "@c402/solana-devnet";
import { SvmChain } from "@c402/svm-chain";
import { startStellarStandin, type StellarStandin } from "@c402/stellar-standin";
import { StellarChain } from "@c402/stellar-chain";
import { Keypair } from "@stellar/stellar-sdk";
import { generateKeyPairSigner, getAddressEncoder, getProgramDerivedAddress, type Address } from "@solana/kit";
import { PayoutAccounts } from "../src/domain/payout-accounts";

const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" as Address;
const ATA_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL" as Address;
const EVM = "0x2222222222222222222222222222222222222222";
const STELLAR = "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H";

/** The owner's associated token account for the mint, as the official ATA program derives it (independently of svm-chain). */
async function associatedAccount(owner: string, mint: string): Promise<string> {
  const enc = getAddressEncoder();
  const [ata] = await getProgramDerivedAddress({
    programAddress: ATA_PROGRAM,
    seeds: [enc.encode(owner as Address), enc.encode(TOKEN_PROGRAM), enc.encode(mint as Address)],
  });
  return ata;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const chainOn = (devnet: { network: string; usdcMint: string }, rpcUrl: string) =>
  SvmChain.create({ network: devnet.network, usdcMint: devnet.usdcMint, rpcUrl, feePayerSecret: newSolanaKeyPair().secretKey, rpcTimeoutMs: 2_000 });

/**
 * Whether a Solana payout wallet can be paid (its associated USDC account
 * exists), asked of the real local devnet, as checkout create asks it before
 * a checkout takes the wallet as a rail.
 */
describe("payout accounts on the Solana devnet", () => {
  let devnet: SolanaDevnet;
  let accounts: PayoutAccounts;

  beforeAll(async () => {
    devnet = await startSolanaDevnet();
    accounts = new PayoutAccounts({ solana: await chainOn(devnet, devnet.url) });
  }, 60_000);

  afterAll(async () => {
    await devnet?.close();
  });

  it("answers exists for a wallet whose USDC account was created (even empty), missing for one without, naming the account either way", async () => {
    const ready = (await generateKeyPairSigner()).address;
    await devnet.setTokenBalance(ready, 0n);
    // A wallet holding SOL but no USDC account is still not payable in USDC.
    const bare = (await generateKeyPairSigner()).address;
    await devnet.airdrop(bare, 1_000_000_000n);

    const checks = await accounts.check([
      { chainFamily: "solana", address: ready },
      { chainFamily: "solana", address: bare },
    ]);
    expect(checks).toEqual([
      {
        chainFamily: "solana",
        address: ready,
        network: devnet.network,
        asset: devnet.usdcMint,
        account: await associatedAccount(ready, devnet.usdcMint),
        exists: true,
      },
      {
        chainFamily: "solana",
        address: bare,
        network: devnet.network,
        asset: devnet.usdcMint,
        account: await associatedAccount(bare, devnet.usdcMint),
        exists: false,
      },
    ]);
  });

  it("leaves EVM and Stellar rails out: the EVM rail is paid through the split contract, Stellar does not settle here", async () => {
    expect(
      await accounts.check([
        { chainFamily: "eip155", address: EVM },
        { chainFamily: "stellar", address: STELLAR },
      ]),
    ).toEqual([]);
  });

  it("refuses an address that is not a Solana key as the caller's mistake (422 naming address), never a failure", async () => {
    const refused = await accounts.check([{ chainFamily: "solana", address: "not-base58-0OIl" }]).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ProblemError);
    expect(refused).toMatchObject({ slug: "invalid-request", errors: [{ field: "address" }] });
  });

  it("answers 503 unavailable (retry is safe) when the network's RPC does not answer: never exists, never missing", async () => {
    const down = new PayoutAccounts({ solana: await chainOn(devnet, `http://127.0.0.1:${await closedPort()}`) });
    const wallet = (await generateKeyPairSigner()).address;
    const refused = await down.check([{ chainFamily: "solana", address: wallet }]).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ProblemError);
    expect(refused).toMatchObject({ slug: "unavailable", status: 503, help: { retry_is_safe: true }, retryAfterSeconds: 5 });
    expect((refused as ProblemError).message).toContain(devnet.network);
  });

  it("checks nothing while Solana is not settled here (SOLANA_ENABLED off): no RPC is asked", async () => {
    const wallet = (await generateKeyPairSigner()).address;
    expect(await new PayoutAccounts({}).check([{ chainFamily: "solana", address: wallet }])).toEqual([]);
  });
});

/**
 * Whether a Stellar payout wallet can be paid (an account needs its USDC
 * trustline; a contract always can), asked of the Soroban RPC stand-in.
 */
describe("payout accounts on Stellar (the Soroban RPC stand-in)", () => {
  let standin: StellarStandin;
  let chain: StellarChain;

  beforeAll(async () => {
    standin = await startStellarStandin();
    chain = new StellarChain({
      network: standin.network,
      rpcUrl: standin.url,
      usdcContract: standin.usdc,
      accountSecret: standin.fundedAccount().secret,
      caCertificatePem: standin.caCertificatePem,
      rpcTimeoutMs: 2_000,
    });
  });
  afterAll(async () => {
    await standin?.close();
  });

  it("answers exists for an account with a USDC trustline (even empty) missing for an account without one (or with no account at all), naming the asset", async () => {
    const trusting = Keypair.random().publicKey();
    standin.fundAccount(trusting);
    standin.mintUsdc(trusting, 0n);
    const bare = Keypair.random().publicKey();
    standin.fundAccount(bare);
    const absent = Keypair.random().publicKey();
    const checks = await new PayoutAccounts({ stellar: chain }).check([
      { chainFamily: "stellar", address: trusting },
      { chainFamily: "eip155", address: EVM },
      { chainFamily: "stellar", address: bare },
      { chainFamily: "stellar", address: absent },
    ]);
    const asset = chain.usdcAssetName;
    expect(asset).toMatch(/^USDC:G/);
    expect(checks).toEqual([
      { chainFamily: "stellar", address: trusting, network: standin.network, asset, account: trusting, exists: true },
      { chainFamily: "stellar", address: bare, network: standin.network, asset, account: bare, exists: false },
      { chainFamily: "stellar", address: absent, network: standin.network, asset, account: absent, exists: false },
    ]);
  });

  it("refuses an address that is not a Stellar one as the caller's mistake (422), and answers 503 when the RPC does not answer", async () => {
    const accounts = new PayoutAccounts({ stellar: chain });
    await expect(accounts.check([{ chainFamily: "stellar", address: "GNOTANADDRESS" }])).rejects.toMatchObject({
      slug: "invalid-request",
      errors: [{ field: "address" }],
    });
    const down = new StellarChain({
      network: standin.network,
      rpcUrl: `https://127.0.0.1:${await closedPort()}`,
      usdcContract: standin.usdc,
      accountSecret: Keypair.random().secret(),
      rpcTimeoutMs: 2_000,
    });
    const refused = await new PayoutAccounts({ stellar: down }).check([{ chainFamily: "stellar", address: STELLAR }]).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ProblemError);
    expect(refused).toMatchObject({ slug: "unavailable", status: 503, help: { retry_is_safe: true } });
    expect((refused as ProblemError).message).toContain(standin.network);
  });

  it("checks nothing while Stellar is not settled here", async () => {
    expect(await new PayoutAccounts({}).check([{ chainFamily: "stellar", address: STELLAR }])).toEqual([]);
  });
});
