import { describe, expectTypeOf, it } from "vitest";
import type { AgentDetail, AgentView } from "../../lib/agents/views";
import type { MessageView } from "../../lib/messages/views";
import type { RequestView } from "../../lib/requests/views";
import type { AgentDetailWire, AgentViewWire } from "../../lib/shared/api/agent";
import type { MessageViewWire } from "../../lib/shared/api/message";
import type { RequestViewWire } from "../../lib/shared/api/request";
import type { TaskViewWire } from "../../lib/shared/api/task";
import type { ToolVerdictWire } from "../../lib/shared/api/tool-call";
import type { TaskView } from "../../lib/tasks/views";
import type { ToolVerdict } from "../../lib/tool-calls/schema";

// Checked by `tsc` (which covers tests/): a field the server adds to a view without adding it to
// the schema clients parse with (or the other way round) fails the type check.
describe("the SDK's response schemas are the server's views", () => {
  it("agrees field for field", () => {
    expectTypeOf<AgentViewWire>().toEqualTypeOf<AgentView>();
    // Spelled out: the server writes it as an intersection, which expectTypeOf tells apart.
    expectTypeOf<AgentDetailWire>().toEqualTypeOf<{ [K in keyof AgentDetail]: AgentDetail[K] }>();
    expectTypeOf<RequestViewWire>().toEqualTypeOf<RequestView>();
    expectTypeOf<MessageViewWire>().toEqualTypeOf<MessageView>();
    expectTypeOf<TaskViewWire>().toEqualTypeOf<TaskView>();
    expectTypeOf<ToolVerdictWire>().toEqualTypeOf<ToolVerdict>();
  });
});
