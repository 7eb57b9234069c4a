import { resolveArbiters, type ArbiterInputs } from "../src/domain/arbiters";
import { applySettingsChange, DEFAULT_ESCROW_SETTINGS, policyRefusal, type EscrowSettings } from "../src/domain/settings";
import { resolveTerms } from "../src/domain/terms";
import { PRESET_WINDOWS } from "../src/domain/windows";

const CREATE_EVM = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const ACCOUNT_EVM = "0x000000000000000000000000000000000000dEaD";
const SERVICE_EVM = "0x52908400098527886E0F7030069857D2E4169EE7";
const SOLANA = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

const inputs = (over: Partial<ArbiterInputs> = {}): ArbiterInputs => ({
  explicit: {},
  account: { evm: null, svm: null },
  service: {},
  forSubSeller: false,
  ...over,
});

/** Arbiter resolution (spec, Escrow create fields): explicit on the create, then the account's setting, then the service default. */
describe("escrow arbiters", () => {
  it("takes the create's arbiter first, then the account's, then the service's", () => {
    const all = { account: { evm: ACCOUNT_EVM, svm: null }, service: { evm: SERVICE_EVM } };
    expect(resolveArbiters(inputs({ ...all, explicit: { evm: CREATE_EVM } }))).toMatchObject({
      ok: true,
      rails: [
        { family: "evm", arbiter: CREATE_EVM, source: "create", offered: true, reason: "" },
        { family: "svm", offered: false },
      ],
    });
    expect(resolveArbiters(inputs(all))).toMatchObject({ ok: true, rails: [{ arbiter: ACCOUNT_EVM, source: "account", offered: true }, {}] });
    expect(resolveArbiters(inputs({ service: { evm: SERVICE_EVM } }))).toMatchObject({ ok: true, rails: [{ arbiter: SERVICE_EVM, source: "service" }, {}] });
  });

  it("checks and checksums an explicit arbiter; a wrong one is named", () => {
    expect(resolveArbiters(inputs({ explicit: { evm: CREATE_EVM.toLowerCase() } }))).toMatchObject({ ok: true, rails: [{ arbiter: CREATE_EVM }, {}] });
    expect(resolveArbiters(inputs({ explicit: { evm: `${CREATE_EVM.slice(0, -1)}D` } }))).toEqual({
      ok: false,
      errors: [{ field: "arbiter_evm", reason: "has a wrong EIP-55 checksum (check the address, or send it all lowercase)" }],
    });
    expect(resolveArbiters(inputs({ explicit: { evm: "0x0000000000000000000000000000000000000000" } }))).toMatchObject({
      ok: false,
      errors: [{ field: "arbiter_evm", reason: expect.stringMatching(/zero address/) }],
    });
  });

  it("a chain with no arbiter offers no escrow rail; terms with no rail at all are refused", () => {
    expect(resolveArbiters(inputs())).toEqual({
      ok: false,
      errors: [{ field: "arbiter_evm", reason: expect.stringMatching(/^is required: no arbiter is named for Base/) }],
    });
    // A Solana arbiter alone (the account's) offers nothing: no Solana escrow here.
    expect(resolveArbiters(inputs({ account: { evm: null, svm: SOLANA } }))).toMatchObject({ ok: false, errors: [{ field: "arbiter_evm" }] });
    const r = resolveArbiters(inputs({ account: { evm: ACCOUNT_EVM, svm: SOLANA } }));
    expect(r).toMatchObject({ ok: true, rails: [{ offered: true }, { family: "svm", arbiter: SOLANA, source: "account", offered: false }] });
    expect(r.ok && r.rails[1]!.reason).toMatch(/Solana escrow is not offered/);
  });

  it("refuses an explicit Solana arbiter: Solana checkouts refuse escrow", () => {
    expect(resolveArbiters(inputs({ explicit: { evm: CREATE_EVM, svm: SOLANA } }))).toEqual({
      ok: false,
      errors: [{ field: "arbiter_svm", reason: expect.stringMatching(/^Solana escrow is not offered/) }],
    });
    expect(resolveArbiters(inputs({ explicit: { svm: "not-base58-0OIl" } }))).toMatchObject({ ok: false, errors: [{ field: "arbiter_svm" }] });
  });

  it("a platform creating for a sub-seller must name the arbiter on the create: the account's and the service's do not count", () => {
    const platform = { account: { evm: ACCOUNT_EVM, svm: null }, service: { evm: SERVICE_EVM }, forSubSeller: true };
    expect(resolveArbiters(inputs(platform))).toEqual({
      ok: false,
      errors: [{ field: "arbiter_evm", reason: expect.stringMatching(/sub-seller must name the arbiter/) }],
    });
    expect(resolveArbiters(inputs({ ...platform, explicit: { evm: CREATE_EVM } }))).toMatchObject({
      ok: true,
      rails: [{ arbiter: CREATE_EVM, source: "create" }, {}],
    });
  });
});

describe("escrow settings", () => {
  it("default to seller_choice, standard, no arbiters", () => {
    expect(DEFAULT_ESCROW_SETTINGS).toEqual({ policy: "seller_choice", defaultPreset: "standard", arbiterEvm: null, arbiterSvm: null, updatedAt: null });
  });

  it("change the fields named, keep the others; arbiters checked per family and normalised; null clears", () => {
    const set = applySettingsChange(DEFAULT_ESCROW_SETTINGS, { policy: "always", arbiterEvm: ACCOUNT_EVM.toLowerCase(), arbiterSvm: SOLANA });
    expect(set).toEqual({ ok: true, next: { ...DEFAULT_ESCROW_SETTINGS, policy: "always", arbiterEvm: ACCOUNT_EVM, arbiterSvm: SOLANA } });
    const next = (set as { next: EscrowSettings }).next;
    expect(applySettingsChange(next, { arbiterEvm: null, defaultPreset: "shipping" })).toEqual({
      ok: true,
      next: { ...next, arbiterEvm: null, defaultPreset: "shipping" },
    });
    expect(applySettingsChange(next, { arbiterEvm: SOLANA, arbiterSvm: ACCOUNT_EVM })).toEqual({
      ok: false,
      errors: [
        { field: "escrow_arbiter_evm", reason: "must be an EVM address: 0x and 40 hex digits" },
        { field: "escrow_arbiter_svm", reason: "must be a Solana address: 32 to 44 base58 characters" },
      ],
    });
  });

  it("a disabled policy refuses escrow checkouts", () => {
    expect(policyRefusal("disabled")).toMatch(/escrow policy is disabled/);
    expect(policyRefusal("seller_choice")).toBeUndefined();
    expect(policyRefusal("always")).toBeUndefined();
  });
});

describe("escrow terms", () => {
  const account: EscrowSettings = { ...DEFAULT_ESCROW_SETTINGS, defaultPreset: "shipping", arbiterEvm: ACCOUNT_EVM };

  it("take the account's default preset unless one is named, and the arbiters by the resolution order", () => {
    expect(resolveTerms(account, { windows: {}, arbiters: {}, forSubSeller: false }, {})).toEqual({
      ok: true,
      terms: {
        preset: "shipping",
        windows: PRESET_WINDOWS.shipping,
        rails: [
          { family: "evm", arbiter: ACCOUNT_EVM, source: "account", offered: true, reason: "" },
          { family: "svm", offered: false, reason: expect.stringMatching(/Solana escrow is not offered/) },
        ],
      },
    });
    expect(resolveTerms(account, { preset: "instant", windows: { holdSeconds: 7_200 }, arbiters: {}, forSubSeller: false }, {})).toMatchObject({
      ok: true,
      terms: { preset: "custom", windows: { ...PRESET_WINDOWS.instant, holdSeconds: 7_200 } },
    });
  });

  it("refuse every bad field at once, and anything under a disabled policy", () => {
    expect(resolveTerms(DEFAULT_ESCROW_SETTINGS, { windows: { settleSeconds: 10 }, arbiters: {}, forSubSeller: false }, {})).toEqual({
      ok: false,
      errors: [
        { field: "escrow_settle_window", reason: "must be at least 3600 seconds (1 hour)" },
        { field: "arbiter_evm", reason: expect.stringMatching(/^is required/) },
      ],
    });
    expect(resolveTerms({ ...account, policy: "disabled" }, { windows: {}, arbiters: {}, forSubSeller: false }, {})).toEqual({
      ok: false,
      policy: expect.stringMatching(/disabled/),
    });
  });
});
