// Preloaded (`--import`) into a web node by tests/support/api-node.ts to run it with its clock off
// by HANDSHAKE_TEST_CLOCK_SKEW_MS, as a node whose NTP failed would be.
import { installSkewedDate } from "./skewed-date.mjs";

const skewMs = Number(process.env.HANDSHAKE_TEST_CLOCK_SKEW_MS);
if (!Number.isFinite(skewMs)) {
  throw new Error("skewed-clock.mjs needs HANDSHAKE_TEST_CLOCK_SKEW_MS (ms, may be negative)");
}
installSkewedDate(skewMs);
