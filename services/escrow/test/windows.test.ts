import { durationText, ESCROW_PRESETS, ESCROW_WINDOW_LIMITS, PRESET_WINDOWS, termsWindows, windowRefusals } from "../src/domain/windows";

/** Escrow windows (spec, Limits): at least 1 hour; settle and hold at most 30 days; backstop at most 180 days and greater than hold. */
describe("escrow windows", () => {
  const HOUR = 3_600;
  const DAY = 86_400;

  it("every preset is within the limits, and they are the windows docs/decisions.md names", () => {
    for (const p of ESCROW_PRESETS) expect({ p, errors: windowRefusals(PRESET_WINDOWS[p]) }).toEqual({ p, errors: [] });
    expect(PRESET_WINDOWS).toEqual({
      instant: { settleSeconds: HOUR, holdSeconds: DAY, backstopSeconds: 7 * DAY },
      standard: { settleSeconds: 3 * DAY, holdSeconds: 7 * DAY, backstopSeconds: 30 * DAY },
      shipping: { settleSeconds: 14 * DAY, holdSeconds: 14 * DAY, backstopSeconds: 60 * DAY },
    });
  });

  it("accepts the limits themselves", () => {
    expect(windowRefusals({ settleSeconds: HOUR, holdSeconds: HOUR, backstopSeconds: HOUR + 1 })).toEqual([]);
    expect(windowRefusals({ settleSeconds: 30 * DAY, holdSeconds: 30 * DAY, backstopSeconds: 180 * DAY })).toEqual([]);
  });

  it("refuses each window outside its limit, one error per field naming the limit", () => {
    expect(windowRefusals({ settleSeconds: HOUR - 1, holdSeconds: 30 * DAY + 1, backstopSeconds: 180 * DAY + 1 })).toEqual([
      { field: "escrow_settle_window", reason: "must be at least 3600 seconds (1 hour)" },
      { field: "escrow_hold_window", reason: "must be at most 2592000 seconds (30 days)" },
      { field: "escrow_backstop_window", reason: "must be at most 15552000 seconds (180 days)" },
    ]);
    expect(windowRefusals({ settleSeconds: 31 * DAY })).toEqual([{ field: "escrow_settle_window", reason: "must be at most 2592000 seconds (30 days)" }]);
    expect(windowRefusals({ holdSeconds: 0, backstopSeconds: 10 })).toEqual([
      { field: "escrow_hold_window", reason: "must be at least 3600 seconds (1 hour)" },
      { field: "escrow_backstop_window", reason: "must be at least 3600 seconds (1 hour)" },
    ]);
    expect(windowRefusals({ settleSeconds: 3600.5 })).toEqual([{ field: "escrow_settle_window", reason: "must be a whole number of seconds" }]);
  });

  it("refuses a backstop that is not greater than the hold window, on the backstop", () => {
    expect(windowRefusals({ holdSeconds: 7 * DAY, backstopSeconds: 7 * DAY })).toEqual([
      { field: "escrow_backstop_window", reason: "must be greater than the hold window (604800 seconds (7 days))" },
    ]);
    expect(windowRefusals({ holdSeconds: 7 * DAY, backstopSeconds: 7 * DAY + 1 })).toEqual([]);
  });

  it("terms take the preset's windows, each overridden by one given; an override makes them custom", () => {
    expect(termsWindows("standard", {})).toEqual({ ok: true, preset: "standard", windows: PRESET_WINDOWS.standard });
    expect(termsWindows("standard", { settleSeconds: 3 * DAY })).toEqual({ ok: true, preset: "standard", windows: PRESET_WINDOWS.standard });
    expect(termsWindows("instant", { settleSeconds: 2 * HOUR })).toEqual({
      ok: true,
      preset: "custom",
      windows: { settleSeconds: 2 * HOUR, holdSeconds: DAY, backstopSeconds: 7 * DAY },
    });
  });

  it("terms whose given hold passes the preset's backstop name the hold; a given backstop is named itself", () => {
    expect(termsWindows("instant", { holdSeconds: 8 * DAY })).toEqual({
      ok: false,
      errors: [{ field: "escrow_hold_window", reason: "must be less than the backstop window (604800 seconds (7 days))" }],
    });
    expect(termsWindows("shipping", { backstopSeconds: 14 * DAY })).toEqual({
      ok: false,
      errors: [{ field: "escrow_backstop_window", reason: "must be greater than the hold window (1209600 seconds (14 days))" }],
    });
    expect(termsWindows("shipping", { settleSeconds: 60, backstopSeconds: 200 * DAY })).toEqual({
      ok: false,
      errors: [
        { field: "escrow_settle_window", reason: "must be at least 3600 seconds (1 hour)" },
        { field: "escrow_backstop_window", reason: "must be at most 15552000 seconds (180 days)" },
      ],
    });
  });

  it("writes durations in words", () => {
    expect([HOUR, 2 * HOUR, DAY, 90, 61, ESCROW_WINDOW_LIMITS.backstopMaxSeconds].map(durationText)).toEqual([
      "1 hour",
      "2 hours",
      "1 day",
      "90 seconds",
      "61 seconds",
      "180 days",
    ]);
  });
});
