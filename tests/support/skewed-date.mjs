/**
 * Shifts every `Date` made or read in this realm by `skewMs`, as on a machine whose clock is off:
 * timers and `performance.now()`, which measure durations, are not shifted. Self-contained, so a
 * browser page can run it too (Playwright's `addInitScript` sends its source).
 */
export function installSkewedDate(skewMs) {
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
}
