import { z } from "zod";

export const RULE_EFFECTS = ["allow", "ask", "deny"] as const;
export const RULE_MODES = ["enforce", "shadow"] as const;

export const ruleEffectSchema = z.enum(RULE_EFFECTS);
export const ruleModeSchema = z.enum(RULE_MODES);

/** Whose calls a rule applies to. */
export const ruleScopeSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("agent"), agent: z.string().min(1).max(40) }),
  z.strictObject({ kind: z.literal("role"), role: z.string().min(1).max(100) }),
  z.strictObject({ kind: z.literal("token"), tokenId: z.uuid() }),
  z.strictObject({
    kind: z.literal("project"),
    cwd: z
      .string()
      .max(4096)
      .regex(/^\/[^\0]*$/, "an absolute directory"),
  }),
  z.strictObject({ kind: z.literal("everyone") }),
]);
export type RuleScope = z.infer<typeof ruleScopeSchema>;

/** A rule as every client sees it. */
export const ruleViewSchema = z.object({
  id: z.string(),
  pattern: z.string(),
  effect: ruleEffectSchema,
  scope: ruleScopeSchema,
  mode: ruleModeSchema,
  requiredApprovals: z.union([z.literal(1), z.literal(2)]),
  expiresAt: z.string().nullable(),
  createdBy: z.string(),
  createdAt: z.string(),
});
export type RuleViewWire = z.infer<typeof ruleViewSchema>;

export const rulePreviewSchema = z.object({ matches: z.number().int().min(0) });

/** How often the Lead approved the same call before: the card's "make it a rule?" hint. */
export const ruleSuggestionSchema = z.object({
  approvals: z.number().int().min(0),
  isSuggested: z.boolean(),
});
