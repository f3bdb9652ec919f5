import { z } from "zod";
import { TIMEOUT_POLICIES } from "../requests/schema";

const humanDecidedBySchema = z.strictObject({
  kind: z.literal("human"),
  userId: z.string(),
  sessionId: z.string(),
});
const tokenDecidedBySchema = z.strictObject({
  kind: z.literal("token"),
  userId: z.string(),
  tokenId: z.string(),
  tokenName: z.string(),
});

/**
 * Who decided a request, stored with the decision (`requests.decided_by`) and shown beside
 * `respondedBy`: a signed-in human (with the session), a human's API token (always with its id and
 * name), a timeout (with the policy that acted), an agent answering the Lead's request, a rule
 * (its id and pattern), or the two Leads of a two-person decision (each by session or token, in
 * the order they approved). Supersede and cancel are not decisions: theirs is null.
 */
export const decidedBySchema = z.discriminatedUnion("kind", [
  humanDecidedBySchema,
  tokenDecidedBySchema,
  z.strictObject({
    kind: z.literal("timeout"),
    policy: z.enum(TIMEOUT_POLICIES),
  }),
  z.strictObject({ kind: z.literal("agent"), agent: z.string(), incarnation: z.number().int() }),
  z.strictObject({ kind: z.literal("rule"), ruleId: z.string(), pattern: z.string() }),
  z.strictObject({
    kind: z.literal("leads"),
    approvals: z
      .array(z.discriminatedUnion("kind", [humanDecidedBySchema, tokenDecidedBySchema]))
      .length(2),
  }),
]);
export type DecidedBy = z.infer<typeof decidedBySchema>;
/** One person's approval: what each of a two-person decision's approvals records. */
export type PersonDecidedBy =
  z.infer<typeof humanDecidedBySchema> | z.infer<typeof tokenDecidedBySchema>;

/** One Lead's approval of a request that needs two, while it waits and after. */
export const requestApprovalSchema = z.object({
  userId: z.string(),
  name: z.string(),
  email: z.string(),
  at: z.string(),
});
export type RequestApprovalView = z.infer<typeof requestApprovalSchema>;

/** The earlier rejected request a new one repeats, and what the Lead said then. */
export const askedAgainAfterSchema = z.strictObject({
  requestId: z.string(),
  feedback: z.string().nullable(),
});
export type AskedAgainAfter = z.infer<typeof askedAgainAfterSchema>;

/** A request between an agent and the Lead, as every client sees it. */
export const requestViewSchema = z.object({
  id: z.string(),
  type: z.string(),
  status: z.string(),
  sender: z.string(),
  target: z.string(),
  agent: z.string(),
  payload: z.record(z.string(), z.unknown()),
  feedback: z.string().nullable(),
  /** The structured answer a response type defines (a question's answer); null otherwise. */
  response: z.record(z.string(), z.unknown()).nullable(),
  respondedBy: z.string().nullable(),
  decidedBy: decidedBySchema.nullable(),
  respondedAt: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.string(),
  incarnation: z.number().int(),
  workVersion: z.number().int().nullable(),
  taskId: z.string().nullable(),
  timeoutPolicy: z.string().nullable(),
  responseType: z.string().nullable(),
  /** How many different Leads must approve: 1, or 2 under the two-person rule. */
  requiredApprovals: z.number().int(),
  /** The approvals recorded so far, oldest first; empty unless two are required. */
  approvals: z.array(requestApprovalSchema),
  /** Set when this request repeats one the Lead rejected from the same agent. */
  askedAgainAfter: askedAgainAfterSchema.nullable(),
});
export type RequestViewWire = z.infer<typeof requestViewSchema>;
