import { env } from "../../lib/env";

/** The Lead the e2e server is started with (a scratch database per run, so fixed values are safe). */
export const E2E_LEAD = { email: "lead@e2e.test", password: "e2e-lead-password-1" };
export const E2E_PORT = env.E2E_PORT;
export const E2E_BASE_URL = `http://127.0.0.1:${E2E_PORT}`;
