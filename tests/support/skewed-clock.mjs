// Preloaded (`--import`) into a web node by tests/support/api-node.ts to run it with its clock off
// by HANDSHAKE_TEST_CLOCK_SKEW_MS, as a node whose NTP failed would be: every `Date` it makes or
// reads is shifted; timers and `performance.now()`, which measure durations, are not.
const skewMs = Number(process.env.HANDSHAKE_TEST_CLOCK_SKEW_MS);
if (!Number.isFinite(skewMs)) {
  throw new Error("skewed-clock.mjs needs HANDSHAKE_TEST_CLOCK_SKEW_MS (ms, may be negative)");
}

const RealDate = globalThis.Date;

class SkewedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + skewMs);
    else super(...args);
  }

  static now() {
    return RealDate.now() + skewMs;
  }
}

globalThis.Date = SkewedDate;
