import { recordHeartbeat } from "@/lib/agents/mutations";
import { heartbeatSchema } from "@/lib/agents/schema";
import { getDb } from "@/lib/db";
import { defineRoute } from "@/lib/http/route";

export const POST = defineRoute({ access: "agent", body: heartbeatSchema }, ({ actor, body }) =>
  recordHeartbeat(getDb(), actor.agentId, actor.incarnation, body),
);
