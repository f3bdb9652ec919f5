// Preloaded through NODE_OPTIONS by scripts/npm-script-signals.test.ts: when the process is one of
// the product's entry points, it says its pid and then holds the process before the entry point's
// own code (and its signal handlers) can run, so what ends it is the signal's default action.
import { writeFileSync } from "node:fs";

if (/(scripts\/start|server)\.ts$/.test(process.argv[1] ?? "")) {
  writeFileSync(process.env.HANDSHAKE_HELD_PID_FILE ?? "", String(process.pid));
  await new Promise(() => setInterval(() => undefined, 1 << 30));
}
