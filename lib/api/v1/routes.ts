import { buildOpenApiDocument, type OpenApiDocument } from "../../http/openapi";
import { defineRoute } from "../../http/route";
import {
  createApiApp,
  definePath,
  listRoutes,
  type ApiPath,
  type ApiRoute,
} from "../../http/router";
import { openApiDocumentSchema } from "../../shared/api/openapi";
import { heartbeat, me } from "./agent-self";
import {
  agent,
  agentExit,
  agentForceStop,
  agentPlanRequirement,
  agentRespawn,
  agentShutdown,
  agentTimeline,
  agentWorkerToken,
  agents,
} from "./agents";
import { login, logout } from "./auth";
import { connectSessions } from "./connect";
import { events } from "./events";
import { health } from "./health";
import { inbox, inboxAck, messages } from "./messages";
import {
  bulkResponses,
  request,
  requestDeadline,
  requestResponses,
  requests,
  requestsExport,
} from "./requests";
import { rule, rulePreview, rules, ruleSuggestion } from "./rules";
import { taskClaim, taskComplete, taskRelease, tasks } from "./tasks";
import { token, tokens } from "./tokens";
import { toolCalls } from "./tool-calls";
import { user, users } from "./users";

let openApiDocument: OpenApiDocument | undefined;

/** The API's own OpenAPI document, built from the table below on first request and then kept. */
export const openApi = definePath("/api/v1/openapi.json", {
  GET: defineRoute(
    { access: "public", scopes: [], responses: { 200: openApiDocumentSchema } },
    async () => (openApiDocument ??= buildOpenApiDocument(API_ROUTES)),
  ),
});

/**
 * The HTTP API v1, one entry per path (decision 016). server.ts serves exactly this table; the
 * scope table in docs/SECURITY.md and the tests enumerate it, so a route exists once it is here.
 */
export const API_PATHS: readonly ApiPath[] = [
  agents,
  agent,
  agentExit,
  agentForceStop,
  agentPlanRequirement,
  agentRespawn,
  agentShutdown,
  agentTimeline,
  agentWorkerToken,
  login,
  logout,
  connectSessions,
  events,
  health,
  heartbeat,
  inbox,
  inboxAck,
  me,
  messages,
  openApi,
  bulkResponses,
  requests,
  requestsExport,
  request,
  requestResponses,
  rules,
  // Before `rule`: its `{id}` would otherwise answer POST /rules/preview with 405.
  rulePreview,
  rule,
  ruleSuggestion,
  requestDeadline,
  tasks,
  taskClaim,
  taskComplete,
  taskRelease,
  tokens,
  token,
  toolCalls,
  users,
  user,
];

/** Every method of every path: method, path template, policy and schemas. */
export const API_ROUTES: readonly ApiRoute[] = listRoutes(API_PATHS);

export function createApi() {
  return createApiApp(API_PATHS);
}
