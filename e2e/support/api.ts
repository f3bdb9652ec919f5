import { randomBytes } from "node:crypto";
import { expect, request as playwrightRequest, type APIRequestContext } from "@playwright/test";
import { SESSION_KEY_HEADER } from "../../lib/shared/auth/session-key";
import { E2E_BASE_URL, E2E_LEAD } from "./accounts";

/**
 * An API client signed in as a human, like a browser without the page: the session cookie and,
 * beside it, the session's key (decision 080).
 */
export async function humanApi(
  credentials: { email: string; password: string } = E2E_LEAD,
): Promise<APIRequestContext> {
  const signIn = await playwrightRequest.newContext({ baseURL: E2E_BASE_URL });
  const response = await signIn.post("/api/v1/auth/login", { data: credentials });
  expect(response.status(), await response.text()).toBe(200);
  const { sessionKey } = (await response.json()) as { sessionKey: string };
  const storageState = await signIn.storageState();
  await signIn.dispose();
  return playwrightRequest.newContext({
    baseURL: E2E_BASE_URL,
    storageState,
    extraHTTPHeaders: { [SESSION_KEY_HEADER]: sessionKey },
  });
}

export async function agentApi(token: string): Promise<APIRequestContext> {
  return playwrightRequest.newContext({
    baseURL: E2E_BASE_URL,
    extraHTTPHeaders: { authorization: `Bearer ${token}` },
  });
}

export function uniqueAgentName(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString("hex")}`;
}

/** Registers an agent with no worker process: the test plays the agent through the HTTP API. */
export async function registerApiAgent(
  lead: APIRequestContext,
  options: { name?: string; role?: string; requirePlan?: boolean } = {},
): Promise<{ name: string; api: APIRequestContext }> {
  const name = options.name ?? uniqueAgentName("e2e");
  const response = await lead.post("/api/v1/agents", {
    data: { name, role: options.role ?? "e2e agent", requirePlan: options.requirePlan ?? true },
  });
  expect(response.status(), await response.text()).toBe(201);
  const { token } = (await response.json()) as { token: string };
  return { name, api: await agentApi(token) };
}

export async function submitPlan(agent: APIRequestContext, plan: string): Promise<string> {
  const response = await agent.post("/api/v1/requests", {
    data: { type: "plan_approval", payload: { plan } },
  });
  expect(response.status(), await response.text()).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

export async function createHuman(
  lead: APIRequestContext,
  role: "lead" | "viewer",
): Promise<{ email: string; password: string }> {
  const credentials = {
    email: `${uniqueAgentName(role)}@e2e.test`,
    password: `pw-${randomBytes(9).toString("hex")}`,
  };
  const response = await lead.post("/api/v1/users", { data: { ...credentials, role } });
  expect(response.status(), await response.text()).toBe(201);
  return credentials;
}
