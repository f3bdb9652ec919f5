import { z } from "zod";
import { agentViewSchema } from "./agent";
import { requestViewSchema } from "./request";

/** One row of `GET /agents`: the agent with what the team board shows beside it. */
export const teamMemberSchema = agentViewSchema.extend({
  taskTitle: z.string().nullable(),
  blockedToolCalls: z.number().int(),
  pendingRequests: z.array(requestViewSchema),
});
export type TeamMemberWire = z.infer<typeof teamMemberSchema>;
