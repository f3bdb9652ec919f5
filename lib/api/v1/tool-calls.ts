import { toolVerdictSchema } from "../../shared/api/tool-call";
import { getDb } from "../../db";
import { DEFAULT_MAX_BODY_BYTES } from "../../http/body";
import { defineRoute } from "../../http/route";
import { MAX_DIFF_BYTES } from "../../shared/protocol/file-change";
import { definePath } from "../../http/router";
import { recordToolCall } from "../../tool-calls/mutations";
import { toolCallSchema } from "../../tool-calls/schema";

export const toolCalls = definePath("/api/v1/tool-calls", {
  POST: defineRoute(
    {
      access: "agent",
      scopes: [],
      body: toolCallSchema,
      agentRate: "tool_calls",
      // Room for a file-writing call's diff beside its arguments (decision 025).
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES + MAX_DIFF_BYTES + 16 * 1024,
      responses: { 200: toolVerdictSchema },
    },
    ({ actor, body }) => recordToolCall(getDb(), actor, body),
  ),
});
