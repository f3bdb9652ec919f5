import { env } from "./env";
import { HandshakeClient } from "../lib/sdk/agent-client";
import { createModel } from "./models/create-model";
import { readSecrets, workerSecretsSchema } from "./secrets-pipe";
import { probeSandbox, readSandboxSettings } from "./tools/sandbox";
import { Worker } from "./worker-loop";

// One agent, one process. The supervisor passes the server URL, the workspace and model settings
// in the environment, and the agent token (and model API key) over a pipe: the worker holds no
// database credentials, and no secret of it sits in its environment or argv.
function required(value: string | undefined, name: string): string {
  if (!value)
    throw new Error(
      `${name} is not set: workers are started by the supervisor (agents/supervisor.ts)`,
    );
  return value;
}

const secrets = await readSecrets(workerSecretsSchema, "worker");
const workspace = required(env.HANDSHAKE_WORKSPACE, "HANDSHAKE_WORKSPACE");
// Probed while the worker makes its first call to the server; bash waits for the verdict.
const sandbox = probeSandbox(workspace, readSandboxSettings(env, process.getuid?.() === 0)).then(
  (state) => {
    if (state.status === "no_sandbox") console.error(`[worker] bash disabled: ${state.reason}`);
    return state;
  },
);

const client = new HandshakeClient(
  required(env.HANDSHAKE_URL, "HANDSHAKE_URL"),
  secrets.agentToken,
);
const worker = new Worker({
  client,
  model: createModel(env, secrets),
  workspace,
  sandbox,
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
