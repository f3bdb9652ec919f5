import { agentEnvSchema, parseEnv, pickSandboxSettings } from "../lib/shared/env/agent-env";

// The agents' side reads process.env here only, and only the variables it uses: lib/env.ts is the
// server's, with the database URL and the secrets.
export const env = parseEnv(agentEnvSchema, process.env);

/** The sandbox settings the supervisor was given, to pass on to its workers. */
export function sandboxSettingsEnv(): Record<string, string> {
  return pickSandboxSettings(process.env);
}
