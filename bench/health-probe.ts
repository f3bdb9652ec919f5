/**
 * G3.4's event-loop lag seen from outside: `GET /api/v1/health` (one `SELECT 1`) every
 * PROBE_INTERVAL_MS, in a process of its own. In the bench's process the probe waited behind the
 * bench's own work (1,000 long-poll clients and 50 socket.io consoles share its event loop), so the
 * loaded figure measured the bench as much as the server. On SIGTERM it prints its round trips in
 * milliseconds as one JSON array (null for a failed call) and exits.
 *
 *   BASE_URL=http://127.0.0.1:… PROBE_INTERVAL_MS=50 node --import tsx bench/health-probe.ts
 */
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";

const baseUrl = process.env.BASE_URL;
const intervalMs = Number(process.env.PROBE_INTERVAL_MS);
if (!baseUrl || !(intervalMs > 0)) throw new Error("BASE_URL and PROBE_INTERVAL_MS are required");

const samples: (number | null)[] = [];
let isStopped = false;

const loop = (async () => {
  while (!isStopped) {
    const startedAt = performance.now();
    try {
      const response = await fetch(`${baseUrl}/api/v1/health`);
      await response.arrayBuffer();
      samples.push(response.ok ? performance.now() - startedAt : null);
    } catch {
      samples.push(null);
    }
    await sleep(intervalMs);
  }
})();

process.once("SIGTERM", () => {
  isStopped = true;
  void loop.then(() => {
    process.stdout.write(JSON.stringify(samples), () => process.exit(0));
  });
});
process.stdout.write("ready\n");
