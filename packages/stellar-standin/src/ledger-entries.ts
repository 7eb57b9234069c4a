import { Address, Keypair, StrKey, xdr, type Asset } from "@stellar/stellar-base";

/**
 * The ledger entries the stand-in keeps, written as the network writes them:
 * classic accounts, USDC trustlines of accounts (G…), USDC balances of
 * contracts (C…) in the asset contract's storage, and authorization nonces.
 */

/** An account's balance and sequence number; every account's only signer is its master key. */
export interface AccountRecord {
  accountId: string;
  /** XLM, in stroops. */
  balance: bigint;
  seqNum: bigint;
  lastModified: number;
}

/** A USDC holding: the trustline of an account (G…) or the asset contract's balance entry of a contract (C…). */
export interface UsdcRecord {
  balance: bigint;
  lastModified: number;
}

const INT64_MAX = "9223372036854775807";
const TRUSTLINE_AUTHORIZED = 1;

/** The account (G…) a transaction names, whether plain or multiplexed (M…). */
export function accountIdOf(muxed: xdr.MuxedAccount): string {
  return muxed.switch().name === "keyTypeEd25519" ? StrKey.encodeEd25519PublicKey(muxed.ed25519()) : StrKey.encodeEd25519PublicKey(muxed.med25519().ed25519());
}

export function accountKey(accountId: string): xdr.LedgerKey {
  return xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId: Keypair.fromPublicKey(accountId).xdrAccountId() }));
}

export function trustlineKey(accountId: string, asset: Asset): xdr.LedgerKey {
  return xdr.LedgerKey.trustline(
    new xdr.LedgerKeyTrustLine({ accountId: Keypair.fromPublicKey(accountId).xdrAccountId(), asset: asset.toTrustLineXDRObject() }),
  );
}

/** Where a Stellar Asset Contract keeps a contract's balance: persistent `["Balance", holder]`. */
function contractBalanceDataKey(holder: string): xdr.ScVal {
  return xdr.ScVal.scvVec([xdr.ScVal.scvSymbol("Balance"), new Address(holder).toScVal()]);
}

export function contractBalanceKey(assetContract: string, holder: string): xdr.LedgerKey {
  return xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: new Address(assetContract).toScAddress(),
      key: contractBalanceDataKey(holder),
      durability: xdr.ContractDataDurability.persistent(),
    }),
  );
}

/** The key of a holding: a trustline for an account, the asset contract's balance entry for a contract. */
export function usdcKey(holder: string, asset: Asset, assetContract: string): xdr.LedgerKey {
  return StrKey.isValidEd25519PublicKey(holder) ? trustlineKey(holder, asset) : contractBalanceKey(assetContract, holder);
}

export function contractInstanceKey(contract: string): xdr.LedgerKey {
  return xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: new Address(contract).toScAddress(),
      key: xdr.ScVal.scvLedgerKeyContractInstance(),
      durability: xdr.ContractDataDurability.persistent(),
    }),
  );
}

/** An authorization nonce: a temporary entry under the authorizing address, alive until the signature expires. */
export function nonceKey(address: string, nonce: xdr.Int64): xdr.LedgerKey {
  return xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: new Address(address).toScAddress(),
      key: xdr.ScVal.scvLedgerKeyNonce(new xdr.ScNonceKey({ nonce })),
      durability: xdr.ContractDataDurability.temporary(),
    }),
  );
}

export function accountEntry(account: AccountRecord, hasUsdcTrustline: boolean): xdr.LedgerEntry {
  return new xdr.LedgerEntry({
    lastModifiedLedgerSeq: account.lastModified,
    data: xdr.LedgerEntryData.account(
      new xdr.AccountEntry({
        accountId: Keypair.fromPublicKey(account.accountId).xdrAccountId(),
        balance: xdr.Int64.fromString(account.balance.toString()),
        seqNum: xdr.Int64.fromString(account.seqNum.toString()),
        numSubEntries: hasUsdcTrustline ? 1 : 0,
        inflationDest: null,
        flags: 0,
        homeDomain: "",
        // Master key weight 1, thresholds 0: the network's defaults for a new account.
        thresholds: Buffer.from([1, 0, 0, 0]),
        signers: [],
        ext: new xdr.AccountEntryExt(0),
      }),
    ),
    ext: new xdr.LedgerEntryExt(0),
  });
}

export function usdcEntry(holder: string, record: UsdcRecord, asset: Asset, assetContract: string): xdr.LedgerEntry {
  if (StrKey.isValidEd25519PublicKey(holder)) {
    return new xdr.LedgerEntry({
      lastModifiedLedgerSeq: record.lastModified,
      data: xdr.LedgerEntryData.trustline(
        new xdr.TrustLineEntry({
          accountId: Keypair.fromPublicKey(holder).xdrAccountId(),
          asset: asset.toTrustLineXDRObject(),
          balance: xdr.Int64.fromString(record.balance.toString()),
          limit: xdr.Int64.fromString(INT64_MAX),
          flags: TRUSTLINE_AUTHORIZED,
          ext: new xdr.TrustLineEntryExt(0),
        }),
      ),
      ext: new xdr.LedgerEntryExt(0),
    });
  }
  // The asset contract's balance layout: {amount: i128, authorized: bool, clawback: bool}, keys in order.
  const value = xdr.ScVal.scvMap([
    new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol("amount"), val: i128(record.balance) }),
    new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol("authorized"), val: xdr.ScVal.scvBool(true) }),
    new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol("clawback"), val: xdr.ScVal.scvBool(false) }),
  ]);
  return contractDataEntry(contractBalanceKey(assetContract, holder), value, record.lastModified);
}

export function nonceEntry(address: string, nonce: xdr.Int64, lastModified: number): xdr.LedgerEntry {
  return contractDataEntry(nonceKey(address, nonce), xdr.ScVal.scvVoid(), lastModified);
}

function contractDataEntry(key: xdr.LedgerKey, val: xdr.ScVal, lastModified: number): xdr.LedgerEntry {
  const data = key.contractData();
  return new xdr.LedgerEntry({
    lastModifiedLedgerSeq: lastModified,
    data: xdr.LedgerEntryData.contractData(
      new xdr.ContractDataEntry({ ext: new xdr.ExtensionPoint(0), contract: data.contract(), key: data.key(), durability: data.durability(), val }),
    ),
    ext: new xdr.LedgerEntryExt(0),
  });
}

/** An i128 ScVal of a bigint (two's complement halves, as the host writes it). */
export function i128(value: bigint): xdr.ScVal {
  const bits = BigInt.asUintN(128, value);
  return xdr.ScVal.scvI128(
    new xdr.Int128Parts({
      hi: xdr.Int64.fromString(BigInt.asIntN(64, bits >> 64n).toString()),
      lo: xdr.Uint64.fromString((bits & 0xffff_ffff_ffff_ffffn).toString()),
    }),
  );
}
