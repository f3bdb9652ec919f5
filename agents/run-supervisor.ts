import path from "node:path";
import { env, sandboxSettingsEnv } from "./env";
import { readSecrets, supervisorSecretsSchema } from "./secrets-pipe";
import { Supervisor } from "./supervisor";

// The supervisor process `npm start` runs beside the web server. Its Lead token and the model API
// key arrive over a pipe from npm start, never in its environment.
if (!env.HANDSHAKE_URL) throw new Error("HANDSHAKE_URL is required (npm start sets it)");
const secrets = await readSecrets(supervisorSecretsSchema, "supervisor");

const supervisor = new Supervisor({
  serverUrl: env.HANDSHAKE_URL,
  supervisorToken: secrets.supervisorToken,
  dataDir: path.resolve(env.HANDSHAKE_DATA_DIR),
  workerEnv: {
    ...(env.ANTHROPIC_BASE_URL ? { ANTHROPIC_BASE_URL: env.ANTHROPIC_BASE_URL } : {}),
    ANTHROPIC_MODEL: env.ANTHROPIC_MODEL,
    ...sandboxSettingsEnv(),
  },
  ...(secrets.anthropicApiKey ? { anthropicApiKey: secrets.anthropicApiKey } : {}),
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
