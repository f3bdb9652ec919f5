import path from "node:path";
import { env } from "../lib/env";
import { Supervisor } from "./supervisor";

// The supervisor process `npm start` runs beside the web server.
if (!env.HANDSHAKE_URL || !env.HANDSHAKE_SUPERVISOR_TOKEN) {
  throw new Error(
    "HANDSHAKE_URL and HANDSHAKE_SUPERVISOR_TOKEN are required (npm start sets both)",
  );
}

const modelSettings: Record<string, string> = {
  ...(env.ANTHROPIC_API_KEY ? { ANTHROPIC_API_KEY: env.ANTHROPIC_API_KEY } : {}),
  ...(env.ANTHROPIC_BASE_URL ? { ANTHROPIC_BASE_URL: env.ANTHROPIC_BASE_URL } : {}),
  ANTHROPIC_MODEL: env.ANTHROPIC_MODEL,
};

const supervisor = new Supervisor({
  serverUrl: env.HANDSHAKE_URL,
  supervisorToken: env.HANDSHAKE_SUPERVISOR_TOKEN,
  dataDir: path.resolve(env.HANDSHAKE_DATA_DIR),
  workerEnv: modelSettings,
  heartbeatMs: env.HANDSHAKE_HEARTBEAT_MS,
});

let isStopping = false;
async function stop(): Promise<void> {
  if (isStopping) return;
  isStopping = true;
  await supervisor.stop();
  process.exit(0);
}
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());

await supervisor.start();
console.log("[supervisor] running");
