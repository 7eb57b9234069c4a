/**
 * The e2e suites' order: Jest's own (failed and slow files first), except the
 * suites that move the local chain's clock forward, which run last. Once the
 * chain is hours ahead of the wall clock, every authorization signed for
 * "now + a few minutes" has expired on it, so nothing may pay after them.
 */
const Sequencer = require("@jest/test-sequencer").default;

/** Files that move the devchain's clock (evm_increaseTime): run after every other suite of the run. */
const MOVES_THE_CHAIN_CLOCK = /\.clock\.test\.ts$/;

class ChainClockLastSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    // Among themselves by name, so each knows what ran before it (escrow's hours before a series' days).
    const clock = sorted.filter((t) => MOVES_THE_CHAIN_CLOCK.test(t.path)).sort((a, b) => a.path.localeCompare(b.path));
    return [...sorted.filter((t) => !MOVES_THE_CHAIN_CLOCK.test(t.path)), ...clock];
  }
}

module.exports = ChainClockLastSequencer;
