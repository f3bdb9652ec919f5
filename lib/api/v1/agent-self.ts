import { agentDetailSchema, agentViewSchema } from "../../shared/api/agent";
import { getAgentDetail } from "../../agents/data";
import { recordHeartbeat } from "../../agents/mutations";
import { heartbeatSchema } from "../../agents/schema";
import { getDb } from "../../db";
import { defineRoute } from "../../http/route";
import { definePath } from "../../http/router";

/** What an agent reads and reports about itself, with its own token. */
export const me = definePath("/api/v1/me", {
  GET: defineRoute(
    { access: "agent", scopes: [], responses: { 200: agentDetailSchema } },
    ({ actor }) => getAgentDetail(getDb(), actor.name),
  ),
});

export const heartbeat = definePath("/api/v1/heartbeat", {
  POST: defineRoute(
    {
      access: "agent",
      scopes: [],
      body: heartbeatSchema,
      // Counted by recordHeartbeat, and only when the heartbeat changes something.
      errors: ["RATE_LIMITED"],
      responses: { 200: agentViewSchema },
    },
    ({ actor, body }) => recordHeartbeat(getDb(), actor.agentId, actor.incarnation, body),
  ),
});
