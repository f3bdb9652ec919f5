import { env } from "../lib/env";
import { HandshakeClient } from "./api-client";
import { createModel } from "./models/create-model";
import { Worker } from "./worker-loop";

// One agent, one process. The supervisor passes only the server URL, this agent's token, its
// workspace and model settings; the worker holds no database credentials.
function required(value: string | undefined, name: string): string {
  if (!value)
    throw new Error(
      `${name} is not set: workers are started by the supervisor (agents/supervisor.ts)`,
    );
  return value;
}

const client = new HandshakeClient(
  required(env.HANDSHAKE_URL, "HANDSHAKE_URL"),
  required(env.HANDSHAKE_AGENT_TOKEN, "HANDSHAKE_AGENT_TOKEN"),
);
const worker = new Worker({
  client,
  model: createModel(env),
  workspace: required(env.HANDSHAKE_WORKSPACE, "HANDSHAKE_WORKSPACE"),
  stateFile: env.HANDSHAKE_STATE_FILE,
  heartbeatMs: env.HANDSHAKE_HEARTBEAT_MS,
});

// SIGTERM from the supervisor means "your incarnation is over": stop at once, nothing to answer.
process.on("SIGTERM", () => process.exit(143));

try {
  const exit = await worker.run();
  console.log(`[worker] exiting: ${exit.reason}`);
  process.exit(exit.code);
} catch (error) {
  console.error("[worker] crashed:", error);
  process.exit(1);
}
