import { env } from "../../lib/env";

/** The Lead the e2e server is started with (a scratch database per run, so fixed values are safe). */
export const E2E_LEAD = { email: "lead@e2e.test", password: "e2e-lead-password-1" };
export const E2E_PORT = env.E2E_PORT;
export const E2E_BASE_URL = `http://127.0.0.1:${E2E_PORT}`;

/**
 * The loopback Anthropic Messages API stub that e2e workers with the Anthropic model talk to: the
 * supervisor is configured with it at start, and a spec that needs it listens there.
 */
export const E2E_MODEL_STUB = {
  port: E2E_PORT + 1_000,
  url: `http://127.0.0.1:${E2E_PORT + 1_000}`,
  apiKey: "e2e-model-stub-key",
};
