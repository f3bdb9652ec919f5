// Preloaded (`--import`) into a web node by tests/support/api-node.ts to run it with its clock off
// by HANDSHAKE_TEST_CLOCK_SKEW_MS, as a node whose NTP failed would be: every `Date` it makes or
// reads is shifted; timers and `performance.now()`, which measure durations, are not.
const skewMs = Number(process.env.HANDSHAKE_TEST_CLOCK_SKEW_MS);
if (!Number.isFinite(skewMs)) {
  throw new Error("skewed-clock.mjs needs HANDSHAKE_TEST_CLOCK_SKEW_MS (ms, may be negative)");
}

const RealDate = globalThis.Date;

// A function, not a subclass: `Date()` called without `new` returns the time as text.
function SkewedDate(...args) {
  if (!new.target) return new RealDate(RealDate.now() + skewMs).toString();
  return args.length === 0 ? new RealDate(RealDate.now() + skewMs) : new RealDate(...args);
}
SkewedDate.prototype = RealDate.prototype;
SkewedDate.now = () => RealDate.now() + skewMs;
SkewedDate.parse = RealDate.parse;
SkewedDate.UTC = RealDate.UTC;

globalThis.Date = SkewedDate;
