import { z } from "zod";
import { instantSchema } from "../shared/api/instant";
import { ruleEffectSchema, ruleModeSchema, ruleScopeSchema } from "../shared/api/rule";

const expiresAtSchema = instantSchema({ offset: true }).nullable();

export const createRuleSchema = z.strictObject({
  pattern: z.string().max(500),
  effect: ruleEffectSchema,
  scope: ruleScopeSchema,
  mode: ruleModeSchema.default("enforce"),
  requiredApprovals: z.union([z.literal(1), z.literal(2)]).default(1),
  expiresAt: expiresAtSchema.default(null),
});
export type CreateRuleInput = z.infer<typeof createRuleSchema>;

/** What the Rules page edits; the pattern and scope are the rule's identity, so a new rule changes them. */
export const updateRuleSchema = z
  .strictObject({
    effect: ruleEffectSchema.optional(),
    mode: ruleModeSchema.optional(),
    requiredApprovals: z.union([z.literal(1), z.literal(2)]).optional(),
    expiresAt: expiresAtSchema.optional(),
  })
  .refine((patch) => Object.keys(patch).length > 0, "name at least one field to change");
export type UpdateRuleInput = z.infer<typeof updateRuleSchema>;

export const ruleParamsSchema = z.strictObject({ id: z.uuid("rule ids are UUIDs") });

export const previewRuleSchema = z.strictObject({
  pattern: z.string().max(500),
  scope: ruleScopeSchema,
});
export type PreviewRuleInput = z.infer<typeof previewRuleSchema>;

export const ruleSuggestionParamsSchema = z.strictObject({ id: z.string().max(100) });
