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
    { access: "human", scopes: ["admin", "decide", "read", "supervisor"] },
    async () => ({ items: await listTeamMembers(getDb()), nextCursor: null }),
  ),
  POST: defineRoute(
    { access: "lead", scopes: ["admin", "connect"], body: registerAgentSchema, status: 201 },
    ({ actor, body }) => registerAgent(getDb(), body, actor),
  ),
});

export const agent = definePath("/api/v1/agents/{name}", {
  GET: defineRoute(
    {
      access: "human",
      scopes: ["admin", "decide", "read", "supervisor"],
      params: agentParamsSchema,
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
    },
    ({ actor, params, body }) => recordWorkerExit(getDb(), params.name, body, actor),
  ),
});

export const agentForceStop = definePath("/api/v1/agents/{name}/force-stop", {
  POST: defineRoute(
    { access: "lead", scopes: ["admin"], params: agentParamsSchema },
    ({ params }) => forceStop(getDb(), params.name),
  ),
});

export const agentPlanRequirement = definePath("/api/v1/agents/{name}/plan-requirement", {
  POST: defineRoute(
    { access: "lead", scopes: ["admin"], params: agentParamsSchema, body: reasonSchema },
    ({ params, body }) => requirePlan(getDb(), params.name, body.reason),
  ),
});

export const agentRespawn = definePath("/api/v1/agents/{name}/respawn", {
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["admin", "supervisor", "connect"],
      params: agentParamsSchema,
      status: 201,
    },
    ({ actor, params }) => respawnAgent(getDb(), params.name, actor),
  ),
});

export const agentShutdown = definePath("/api/v1/agents/{name}/shutdown", {
  POST: defineRoute(
    { access: "lead", scopes: ["admin"], params: agentParamsSchema, body: shutdownAgentSchema },
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
    },
    ({ params, query }) => listAgentTimeline(getDb(), params.name, query),
  ),
});

export const agentWorkerToken = definePath("/api/v1/agents/{name}/worker-token", {
  POST: defineRoute(
    { access: "lead", scopes: ["admin", "supervisor"], params: agentParamsSchema },
    ({ params }) => issueWorkerToken(getDb(), params.name),
  ),
});
