import { agentDetailSchema, agentViewSchema, registeredAgentSchema } from "../../shared/api/agent";
import { requestViewSchema } from "../../shared/api/request";
import { teamPageSchema } from "../../shared/api/team";
import { timelinePageSchema } from "../../shared/api/timeline";
import { findAgentByName, getAgentDetail, listTeamMembers } from "../../agents/data";
import {
  forceStop,
  issueWorkerToken,
  recordWorkerExit,
  registerAgent,
  requirePlan,
  respawnAgent,
} from "../../agents/mutations";
import {
  agentParamsSchema,
  listAgentsQuerySchema,
  reasonSchema,
  registerAgentSchema,
  shutdownAgentSchema,
  workerExitSchema,
} from "../../agents/schema";
import { listAgentTimeline, timelineQuerySchema } from "../../agents/timeline";
import { getDb } from "../../db";
import { defineRoute, jsonResponse } from "../../http/route";
import { definePath } from "../../http/router";
import { sendLeadRequest } from "../../requests/mutations";

export const agents = definePath("/api/v1/agents", {
  GET: defineRoute(
    {
      access: "human",
      scopes: ["admin", "decide", "read", "supervisor"],
      query: listAgentsQuerySchema,
      responses: { 200: teamPageSchema },
    },
    async ({ query }) => {
      const { members, olderGone } = await listTeamMembers(getDb(), query);
      return { items: members, nextCursor: null, olderGone };
    },
  ),
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["admin", "connect"],
      body: registerAgentSchema,
      errors: ["RATE_LIMITED"],
      status: 201,
      responses: { 201: registeredAgentSchema },
    },
    ({ actor, body }) => registerAgent(getDb(), body, actor),
  ),
});

export const agent = definePath("/api/v1/agents/{name}", {
  GET: defineRoute(
    {
      access: "human",
      scopes: ["admin", "decide", "read", "supervisor"],
      params: agentParamsSchema,
      responses: { 200: agentDetailSchema },
    },
    ({ params }) => getAgentDetail(getDb(), params.name),
  ),
});

export const agentExit = definePath("/api/v1/agents/{name}/exit", {
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["admin", "supervisor"],
      params: agentParamsSchema,
      body: workerExitSchema,
      responses: { 200: agentViewSchema },
    },
    ({ actor, params, body }) => recordWorkerExit(getDb(), params.name, body, actor),
  ),
});

export const agentForceStop = definePath("/api/v1/agents/{name}/force-stop", {
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["admin"],
      params: agentParamsSchema,
      responses: { 200: agentViewSchema },
    },
    ({ params }) => forceStop(getDb(), params.name),
  ),
});

export const agentPlanRequirement = definePath("/api/v1/agents/{name}/plan-requirement", {
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["admin"],
      params: agentParamsSchema,
      body: reasonSchema,
      responses: { 200: agentViewSchema },
    },
    ({ params, body }) => requirePlan(getDb(), params.name, body.reason),
  ),
});

export const agentRespawn = definePath("/api/v1/agents/{name}/respawn", {
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["admin", "supervisor", "connect"],
      params: agentParamsSchema,
      errors: ["RATE_LIMITED"],
      status: 201,
      responses: { 201: registeredAgentSchema },
    },
    ({ actor, params }) => respawnAgent(getDb(), params.name, actor),
  ),
});

export const agentShutdown = definePath("/api/v1/agents/{name}/shutdown", {
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["admin"],
      params: agentParamsSchema,
      body: shutdownAgentSchema,
      responses: { 200: requestViewSchema, 201: requestViewSchema },
    },
    async ({ params, body }) => {
      const found = await findAgentByName(getDb(), params.name);
      const { request, isCreated } = await sendLeadRequest(getDb(), found.id, {
        type: "shutdown",
        payload: body.reason ? { reason: body.reason } : {},
        timeoutSeconds: body.timeoutSeconds,
      });
      return jsonResponse(request, { status: isCreated ? 201 : 200 });
    },
  ),
});

export const agentTimeline = definePath("/api/v1/agents/{name}/timeline", {
  GET: defineRoute(
    {
      access: "human",
      scopes: ["admin", "decide", "read"],
      params: agentParamsSchema,
      query: timelineQuerySchema,
      responses: { 200: timelinePageSchema },
    },
    ({ params, query }) => listAgentTimeline(getDb(), params.name, query),
  ),
});

export const agentWorkerToken = definePath("/api/v1/agents/{name}/worker-token", {
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["admin", "supervisor"],
      params: agentParamsSchema,
      responses: { 200: registeredAgentSchema },
    },
    ({ actor, params }) => issueWorkerToken(getDb(), params.name, actor),
  ),
});
