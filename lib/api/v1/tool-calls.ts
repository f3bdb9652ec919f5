import { getDb } from "../../db";
import { defineRoute } from "../../http/route";
import { definePath } from "../../http/router";
import { recordToolCall } from "../../tool-calls/mutations";
import { toolCallSchema } from "../../tool-calls/schema";

export const toolCalls = definePath("/api/v1/tool-calls", {
  POST: defineRoute(
    { access: "agent", scopes: [], body: toolCallSchema, agentRate: "tool_calls" },
    ({ actor, body }) => recordToolCall(getDb(), actor, body),
  ),
});
