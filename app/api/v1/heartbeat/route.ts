import { recordHeartbeat } from "@/lib/agents/mutations";
import { heartbeatSchema } from "@/lib/agents/schema";
import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";

export const POST = defineRoute(
  { access: "agent", scopes: [], body: heartbeatSchema },
  ({ actor, body }) => recordHeartbeat(getDb(), actor.agentId, actor.incarnation, body),
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
