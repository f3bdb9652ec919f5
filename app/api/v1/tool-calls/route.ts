import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";
import { recordToolCall } from "@/lib/tool-calls/mutations";
import { toolCallSchema } from "@/lib/tool-calls/schema";

export const POST = defineRoute(
  { access: "agent", scopes: [], body: toolCallSchema, agentRate: "tool_calls" },
  ({ actor, body }) => recordToolCall(getDb(), actor, body),
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
