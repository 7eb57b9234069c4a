import { WEBHOOK_EVENT_NAMES, WEBHOOK_EVENTS_FIRED } from "@c402/contracts";
import { EVENT_SOURCES } from "../src/domain/event-catalogue";

/** The catalogue and the contract's list of fired events say the same thing: a name fires exactly when a bus event becomes it. */
describe("the webhook event catalogue", () => {
  it("has a source for every event the contract says fires, and fires nothing else", () => {
    const sourced = new Set(EVENT_SOURCES.map((s) => s.event));
    expect([...sourced].sort()).toEqual([...WEBHOOK_EVENTS_FIRED].sort());
  });

  it("makes each (topic, type) into one webhook event, and only spec names", () => {
    const keys = EVENT_SOURCES.map((s) => `${s.topic} ${s.busType}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const s of EVENT_SOURCES) expect(WEBHOOK_EVENT_NAMES).toContain(s.event);
  });
});
