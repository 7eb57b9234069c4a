import { STELLAR_NETWORKS } from "@c402/x402";
import {
  Account,
  Address,
  Asset,
  authorizeEntry,
  Keypair,
  nativeToScVal,
  Networks,
  Operation,
  SorobanDataBuilder,
  TransactionBuilder,
  xdr,
} from "@stellar/stellar-sdk";
import { NULL_ACCOUNT } from "@stellar/stellar-sdk/contract";
import type { ExactStellarRequirement } from "../src";

/**
 * Exact Stellar payments for the offline tests, built with stellar-sdk in the
 * official @x402/stellar 2.9 client's shape — a transaction from the null
 * account (sequence 1, fee 100 + the resource fee, five-minute time bounds)
 * of one InvokeHostFunction calling the token's transfer(from, to, i128),
 * its one address-credential authorization entry (the same call, no
 * sub-invocations) signed by the payer for the network — or with one thing
 * changed to tamper with it.
 */

export const TESTNET = "stellar:testnet";
export const TESTNET_PASSPHRASE = Networks.TESTNET;
export const TESTNET_USDC = STELLAR_NETWORKS["stellar:testnet"].usdc;
export const PUBNET_USDC = STELLAR_NETWORKS["stellar:pubnet"].usdc;
/** The source the official client builds with when it has no account of its own. */
export { NULL_ACCOUNT };
/** What the simulation of a SAC transfer asks for, roughly: the payload's declared resource fee. */
export const SOME_RESOURCE_FEE = 60_000n - 100n - 20_000n;

export const address = (text: string) => nativeToScVal(text, { type: "address" });
export const i128 = (amount: bigint) => nativeToScVal(amount, { type: "i128" });

export interface PaymentChanges {
  /** The call the operation makes (default: the requirement's transfer from the payer). */
  contract?: string;
  functionName?: string;
  args?: xdr.ScVal[];
  /** The call the payer's entry authorizes, when it should differ from the operation's. */
  authorizedArgs?: xdr.ScVal[];
  txSource?: string;
  opSource?: string;
  /** Operations after the payment's (a second transfer, a classic payment…). */
  extraOperations?: xdr.Operation[];
  /** The declared total fee and resource fee. */
  fee?: bigint;
  resourceFee?: bigint;
  expirationLedger?: number;
  networkPassphrase?: string;
  /** Who signs the payer's entry (default the payer). */
  signer?: Keypair;
  unsigned?: boolean;
  subInvocations?: xdr.SorobanAuthorizedInvocation[];
  /** Entries after the payer's (built by the test), or the payer's replaced. */
  extraAuth?: xdr.SorobanAuthorizationEntry[];
  replaceAuth?: xdr.SorobanAuthorizationEntry[];
  withoutSorobanData?: boolean;
}

/** An unsigned address-credential entry authorizing `call` for `who`, as a simulation in recording mode returns it. */
export function authEntry(
  who: string,
  call: xdr.InvokeContractArgs,
  subInvocations: xdr.SorobanAuthorizedInvocation[] = [],
  nonce = xdr.Int64.fromString(String(Math.floor(Math.random() * 2 ** 52))),
): xdr.SorobanAuthorizationEntry {
  return new xdr.SorobanAuthorizationEntry({
    credentials: xdr.SorobanCredentials.sorobanCredentialsAddress(
      new xdr.SorobanAddressCredentials({ address: new Address(who).toScAddress(), nonce, signatureExpirationLedger: 0, signature: xdr.ScVal.scvVoid() }),
    ),
    rootInvocation: new xdr.SorobanAuthorizedInvocation({
      function: xdr.SorobanAuthorizedFunction.sorobanAuthorizedFunctionTypeContractFn(call),
      subInvocations,
    }),
  });
}

export function contractCall(contract: string, functionName: string, args: xdr.ScVal[]): xdr.InvokeContractArgs {
  return new xdr.InvokeContractArgs({ contractAddress: new Address(contract).toScAddress(), functionName, args });
}

/** The footprint a SAC transfer between two accounts touches: the contract instance, both trustlines. */
function transferFootprint(from: string, to: string): SorobanDataBuilder {
  const usdc = new Asset("USDC", "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN");
  const trustline = (account: string) =>
    xdr.LedgerKey.trustline(new xdr.LedgerKeyTrustLine({ accountId: Keypair.fromPublicKey(account).xdrAccountId(), asset: usdc.toTrustLineXDRObject() }));
  const keys = [from, to].filter((a) => a.startsWith("G")).map(trustline);
  return new SorobanDataBuilder().setResources(200_000, 1_000, 500).setFootprint([], keys);
}

/** The payload.transaction of the payer's payment of `requirement`, with `changes`. */
export async function stellarPayment(payer: Keypair, requirement: ExactStellarRequirement, changes: PaymentChanges = {}): Promise<string> {
  const passphrase = changes.networkPassphrase ?? TESTNET_PASSPHRASE;
  const contract = changes.contract ?? requirement.asset;
  const args = changes.args ?? [address(payer.publicKey()), address(requirement.payTo), i128(requirement.amount)];
  const call = contractCall(contract, changes.functionName ?? "transfer", args);
  const authorized = changes.authorizedArgs ? contractCall(contract, changes.functionName ?? "transfer", changes.authorizedArgs) : call;
  let auth = changes.replaceAuth;
  if (!auth) {
    const entry = authEntry(payer.publicKey(), authorized, changes.subInvocations);
    const signed = changes.unsigned ? entry : await authorizeEntry(entry, changes.signer ?? payer, changes.expirationLedger ?? 1_012, passphrase);
    auth = [signed, ...(changes.extraAuth ?? [])];
  }
  const resourceFee = changes.resourceFee ?? SOME_RESOURCE_FEE;
  const builder = new TransactionBuilder(new Account(changes.txSource ?? NULL_ACCOUNT, "0"), { fee: "100", networkPassphrase: passphrase })
    .setTimeout(300)
    .addOperation(
      Operation.invokeHostFunction({
        func: xdr.HostFunction.hostFunctionTypeInvokeContract(call),
        auth,
        ...(changes.opSource ? { source: changes.opSource } : {}),
      }),
    );
  for (const op of changes.extraOperations ?? []) builder.addOperation(op);
  if (!changes.withoutSorobanData) builder.setSorobanData(transferFootprint(payer.publicKey(), requirement.payTo).setResourceFee(resourceFee).build());
  const tx = builder.build();
  if (changes.fee !== undefined) {
    // The declared total fee, whatever the builder summed (base fee per operation plus the resource fee).
    const envelope = tx.toEnvelope();
    envelope.v1().tx().fee(Number(changes.fee));
    return envelope.toXDR("base64");
  }
  return tx.toXDR();
}
