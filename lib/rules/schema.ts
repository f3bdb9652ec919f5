import { z } from "zod";
import { instantSchema } from "../shared/api/instant";
import { ruleEffectSchema, ruleModeSchema, ruleScopeSchema } from "../shared/api/rule";

const expiresAtSchema = instantSchema({ offset: true }).nullable();

/** A year: a rule meant for longer has no expiry. */
export const MAX_RULE_SECONDS = 365 * 24 * 60 * 60;

/**
 * A rule's end as a span from now, on the database's clock: a client whose own clock may be off,
 * as a Lead's browser may, names how long instead of until when (decision 084).
 */
const expiresInSecondsSchema = z
  .number()
  .int()
  .min(1)
  .max(MAX_RULE_SECONDS)
  .describe("the rule ends this long from now by the server's clock; not with expiresAt");

function namesOneEnd(input: { expiresAt?: unknown; expiresInSeconds?: unknown }): boolean {
  return input.expiresAt === undefined || input.expiresInSeconds === undefined;
}
const ONE_END = { message: "name expiresAt or expiresInSeconds, not both" };

export const createRuleSchema = z
  .strictObject({
    pattern: z.string().max(500),
    effect: ruleEffectSchema,
    scope: ruleScopeSchema,
    mode: ruleModeSchema.default("enforce"),
    requiredApprovals: z.union([z.literal(1), z.literal(2)]).default(1),
    expiresAt: expiresAtSchema.optional(),
    expiresInSeconds: expiresInSecondsSchema.optional(),
  })
  .refine(namesOneEnd, ONE_END);
export type CreateRuleInput = z.infer<typeof createRuleSchema>;

/** What the Rules page edits; the pattern and scope are the rule's identity, so a new rule changes them. */
export const updateRuleSchema = z
  .strictObject({
    effect: ruleEffectSchema.optional(),
    mode: ruleModeSchema.optional(),
    requiredApprovals: z.union([z.literal(1), z.literal(2)]).optional(),
    expiresAt: expiresAtSchema.optional(),
    expiresInSeconds: expiresInSecondsSchema.optional(),
  })
  .refine((patch) => Object.keys(patch).length > 0, "name at least one field to change")
  .refine(namesOneEnd, ONE_END);
export type UpdateRuleInput = z.infer<typeof updateRuleSchema>;

export const ruleParamsSchema = z.strictObject({ id: z.uuid("rule ids are UUIDs") });

export const previewRuleSchema = z.strictObject({
  pattern: z.string().max(500),
  scope: ruleScopeSchema,
});
export type PreviewRuleInput = z.infer<typeof previewRuleSchema>;

export const ruleSuggestionParamsSchema = z.strictObject({ id: z.string().max(100) });
