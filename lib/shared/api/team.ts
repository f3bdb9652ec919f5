import { z } from "zod";
import { agentViewSchema } from "./agent";
import { pageSchema } from "./page";
import { requestViewSchema } from "./request";

/** One row of `GET /agents`: the agent with what the team board shows beside it. */
export const teamMemberSchema = agentViewSchema.extend({
  taskTitle: z.string().nullable(),
  blockedToolCalls: z.number().int(),
  pendingRequests: z.array(requestViewSchema),
});
export type TeamMemberWire = z.infer<typeof teamMemberSchema>;

/**
 * `GET /agents`: the board's rows, and how many agents that ended or went offline with nothing
 * pending it leaves out (`gone=recent`, the default).
 */
export const teamPageSchema = pageSchema(teamMemberSchema).extend({
  olderGone: z.number().int().nonnegative(),
});
