import { randomBytes } from "node:crypto";
import {
  agent as agentRoute,
  agentExit as exitRoute,
  agentForceStop as forceStopRoute,
  agentPlanRequirement as planRequirementRoute,
  agentRespawn as respawnRoute,
  agentShutdown as shutdownRoute,
  agentTimeline as timelineRoute,
  agentWorkerToken as workerTokenRoute,
  agents as agentsRoute,
} from "../../lib/api/v1/agents";
import { heartbeat as heartbeatRoute, me as meRoute } from "../../lib/api/v1/agent-self";
import { connectSessions as connectSessionsRoute } from "../../lib/api/v1/connect";
import { events as eventsRoute } from "../../lib/api/v1/events";
import {
  inbox as inboxRoute,
  inboxAck as inboxAckRoute,
  messages as messagesRoute,
} from "../../lib/api/v1/messages";
import {
  request as requestRoute,
  requestResponses as responsesRoute,
  requests as requestsRoute,
} from "../../lib/api/v1/requests";
import {
  taskClaim as claimRoute,
  taskComplete as completeRoute,
  taskRelease as releaseRoute,
  tasks as tasksRoute,
} from "../../lib/api/v1/tasks";
import { token as tokenRoute, tokens as tokensRoute } from "../../lib/api/v1/tokens";
import { toolCalls as toolCallsRoute } from "../../lib/api/v1/tool-calls";
import { users as usersRoute } from "../../lib/api/v1/users";
import { getDb } from "../../lib/db";
import type { PrismaClient } from "../../lib/generated/prisma/client";
import { expireRequest } from "../../lib/requests/mutations";
import type { RequestView } from "../../lib/requests/views";
import { callRoute, signedInHuman } from "../route-client";

type Headers = Record<string, string>;
type Json = Record<string, unknown> & {
  error?: { code: string; message: string } & Record<string, unknown>;
};
export type ApiResponse = { status: number; json: Json };

async function call(
  handler: Parameters<typeof callRoute>[0],
  options: Parameters<typeof callRoute>[1],
): Promise<ApiResponse> {
  const response = await callRoute(handler, options);
  return { status: response.status, json: (response.json ?? {}) as Json };
}

/** The HTTP API v1, called in-process through the real route handlers. */
export const api = {
  registerAgent: (headers: Headers, body: unknown) =>
    call(agentsRoute.POST, { path: "/api/v1/agents", body, headers }),
  listAgents: (headers: Headers) => call(agentsRoute.GET, { path: "/api/v1/agents", headers }),
  getAgent: (headers: Headers, name: string) =>
    call(agentRoute.GET, { path: `/api/v1/agents/${name}`, headers, params: { name } }),
  timeline: (headers: Headers, name: string, query = "") =>
    call(timelineRoute.GET, {
      path: `/api/v1/agents/${name}/timeline${query}`,
      headers,
      params: { name },
    }),
  requirePlan: (headers: Headers, name: string, body: unknown = {}) =>
    call(planRequirementRoute.POST, {
      path: `/api/v1/agents/${name}/plan-requirement`,
      body,
      headers,
      params: { name },
    }),
  requestShutdown: (headers: Headers, name: string, body: unknown = {}) =>
    call(shutdownRoute.POST, {
      path: `/api/v1/agents/${name}/shutdown`,
      body,
      headers,
      params: { name },
    }),
  forceStop: (headers: Headers, name: string) =>
    call(forceStopRoute.POST, {
      method: "POST",
      path: `/api/v1/agents/${name}/force-stop`,
      headers,
      params: { name },
    }),
  respawn: (headers: Headers, name: string) =>
    call(respawnRoute.POST, {
      method: "POST",
      path: `/api/v1/agents/${name}/respawn`,
      headers,
      params: { name },
    }),
  workerToken: (headers: Headers, name: string) =>
    call(workerTokenRoute.POST, {
      method: "POST",
      path: `/api/v1/agents/${name}/worker-token`,
      headers,
      params: { name },
    }),
  reportExit: (headers: Headers, name: string, body: unknown) =>
    call(exitRoute.POST, { path: `/api/v1/agents/${name}/exit`, body, headers, params: { name } }),
  submitRequest: (headers: Headers, body: unknown) =>
    call(requestsRoute.POST, { path: "/api/v1/requests", body, headers }),
  listRequests: (headers: Headers, query = "") =>
    call(requestsRoute.GET, { path: `/api/v1/requests${query}`, headers }),
  getRequest: (headers: Headers, id: string, query = "") =>
    call(requestRoute.GET, { path: `/api/v1/requests/${id}${query}`, headers, params: { id } }),
  connectSession: (headers: Headers, body: unknown) =>
    call(connectSessionsRoute.POST, { path: "/api/v1/connect/sessions", body, headers }),
  respond: (headers: Headers, id: string, body: unknown) =>
    call(responsesRoute.POST, {
      path: `/api/v1/requests/${id}/responses`,
      body,
      headers,
      params: { id },
    }),
  inbox: (headers: Headers, query = "") =>
    call(inboxRoute.GET, { path: `/api/v1/inbox${query}`, headers }),
  ack: (headers: Headers, upTo: number) =>
    call(inboxAckRoute.POST, { path: "/api/v1/inbox/ack", body: { upTo }, headers }),
  sendMessage: (headers: Headers, body: unknown) =>
    call(messagesRoute.POST, { path: "/api/v1/messages", body, headers }),
  toolCall: (headers: Headers, body: unknown) =>
    call(toolCallsRoute.POST, { path: "/api/v1/tool-calls", body, headers }),
  heartbeat: (headers: Headers, body: unknown) =>
    call(heartbeatRoute.POST, { path: "/api/v1/heartbeat", body, headers }),
  me: (headers: Headers) => call(meRoute.GET, { path: "/api/v1/me", headers }),
  createTask: (headers: Headers, body: unknown) =>
    call(tasksRoute.POST, { path: "/api/v1/tasks", body, headers }),
  listTasks: (headers: Headers) => call(tasksRoute.GET, { path: "/api/v1/tasks", headers }),
  claimTask: (headers: Headers, id: string) =>
    call(claimRoute.POST, {
      method: "POST",
      path: `/api/v1/tasks/${id}/claim`,
      headers,
      params: { id },
    }),
  releaseTask: (headers: Headers, id: string) =>
    call(releaseRoute.POST, {
      method: "POST",
      path: `/api/v1/tasks/${id}/release`,
      headers,
      params: { id },
    }),
  completeTask: (headers: Headers, id: string) =>
    call(completeRoute.POST, {
      method: "POST",
      path: `/api/v1/tasks/${id}/complete`,
      headers,
      params: { id },
    }),
  createUser: (headers: Headers, body: unknown) =>
    call(usersRoute.POST, { path: "/api/v1/users", body, headers }),
  createToken: (headers: Headers, body: unknown) =>
    call(tokensRoute.POST, { path: "/api/v1/tokens", body, headers }),
  listTokens: (headers: Headers, query = "") =>
    call(tokensRoute.GET, { path: `/api/v1/tokens${query}`, headers }),
  revokeToken: (headers: Headers, id: string) =>
    call(tokenRoute.DELETE, {
      method: "DELETE",
      path: `/api/v1/tokens/${id}`,
      headers,
      params: { id },
    }),
  events: (headers: Headers, query = "") =>
    call(eventsRoute.GET, { path: `/api/v1/events${query}`, headers }),
};

export type TestAgent = { name: string; token: string; headers: Headers };

/**
 * Six random bytes: a run's shared database holds hundreds of names under one prefix, and with
 * three a CI run drew a name already taken (AGENT_EXISTS).
 */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString("hex")}`;
}

/** A signed-in Lead (cookie session); created once per test file. */
let cachedLead: Awaited<ReturnType<typeof signedInHuman>> | null = null;
export async function lead() {
  cachedLead ??= await signedInHuman("lead");
  return cachedLead;
}

export async function registerAgent(
  options: { name?: string; requirePlan?: boolean; taskId?: string } = {},
): Promise<TestAgent> {
  const name = options.name ?? uniqueName("agent");
  const response = await api.registerAgent((await lead()).headers, {
    name,
    role: "tester",
    ...(options.requirePlan !== undefined ? { requirePlan: options.requirePlan } : {}),
    ...(options.taskId ? { taskId: options.taskId } : {}),
  });
  if (response.status !== 201) throw new Error(`register failed: ${JSON.stringify(response.json)}`);
  const token = String(response.json.token);
  return { name, token, headers: { authorization: `Bearer ${token}` } };
}

/** An agent the supervisor runs (a scripted worker), registered by the signed-in Lead. */
export async function registerWorker(): Promise<TestAgent> {
  const name = uniqueName("w");
  const response = await api.registerAgent((await lead()).headers, {
    name,
    role: "worker",
    worker: { model: "scripted", script: "careful-planner" },
  });
  if (response.status !== 201) throw new Error(`register failed: ${JSON.stringify(response.json)}`);
  const token = String(response.json.token);
  return { name, token, headers: { authorization: `Bearer ${token}` } };
}

export async function submitPlan(
  agent: TestAgent,
  plan = "1. write the file\n2. run the tests",
): Promise<ApiResponse> {
  return api.submitRequest(agent.headers, { type: "plan_approval", payload: { plan } });
}

export async function createTask(title = "a task"): Promise<string> {
  const response = await api.createTask((await lead()).headers, { title });
  if (response.status !== 201) throw new Error(`task failed: ${JSON.stringify(response.json)}`);
  return String(response.json.id);
}

export type TestToken = {
  id: string;
  name: string;
  scope: string;
  token: string;
  headers: Headers;
};

/** An API token of the given scope, created through the API by the signed-in human `owner`. */
export async function createToken(
  scope: string,
  owner: { headers: Headers } | null = null,
): Promise<TestToken> {
  const response = await api.createToken((owner ?? (await lead())).headers, {
    name: uniqueName(scope),
    scope,
  });
  if (response.status !== 201) throw new Error(`token failed: ${JSON.stringify(response.json)}`);
  const token = String(response.json.token);
  return {
    id: String(response.json.id),
    name: String(response.json.name),
    scope,
    token,
    headers: { authorization: `Bearer ${token}` },
  };
}

/**
 * Sweeps one request as the sweeper would at `now`, and only it: a sweep ahead of the clock
 * would expire every test file's pending requests in the shared database (decision 079).
 * The request's view if this call expired it, null if it was not due or no longer pending.
 */
export async function expireOwnAt(
  id: string,
  now: Date,
  db: PrismaClient = getDb(),
): Promise<RequestView | null> {
  const { agentId } = await db.request.findUniqueOrThrow({ where: { id } });
  return expireRequest(db, { id, agentId }, { now });
}
