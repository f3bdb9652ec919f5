import { z } from "zod";
import { toolCwdSchema } from "../protocol/tool-approval";

/** Claude Code's session and teammate ids are UUIDs; anything id-like and bounded is accepted. */
const connectorIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "ids are [A-Za-z0-9][A-Za-z0-9._-], ≤ 128");

const printableSchema = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .regex(/^[\x20-\x7e]+$/, "printable ASCII only");

/** What a hook knows about its session: Claude Code's SessionStart / PreToolUse input. */
export const connectSessionSchema = z.strictObject({
  sessionId: connectorIdSchema,
  cwd: toolCwdSchema.refine((cwd) => !/[\u0000-\u001f\u007f]/.test(cwd), "no control characters"),
  model: printableSchema(200).optional(),
  parentSessionId: connectorIdSchema.optional(),
  /** A teammate (subagent) of the session: an agent of its own. */
  agentId: connectorIdSchema.optional(),
  agentType: printableSchema(100).optional(),
});
export type ConnectSessionInput = z.infer<typeof connectSessionSchema>;
