import type { Rule } from "../generated/prisma/client";
import { ruleScopeSchema, type RuleViewWire } from "../shared/api/rule";
import type { JudgedRule } from "../shared/rules/verdict";

export type RuleView = RuleViewWire;

/**
 * A stored rule as the gate judges it. The CHECK constraints keep effect, mode and scope kind
 * closed; a scope that still fails to parse (a hand-edited row) becomes an agent name no agent can
 * have, so the rule applies to nobody rather than to everybody.
 */
export function toJudgedRule(rule: Rule): JudgedRule {
  const scope = ruleScopeSchema.safeParse(rule.scope);
  return {
    id: rule.id,
    pattern: rule.pattern,
    effect: rule.effect as JudgedRule["effect"],
    mode: rule.mode === "shadow" ? "shadow" : "enforce",
    scope: scope.success ? scope.data : { kind: "agent", agent: "" },
    requiredApprovals: rule.requiredApprovals,
    expiresAt: rule.expiresAt,
    createdAt: rule.createdAt,
  };
}

export function toRuleView(rule: Rule): RuleView {
  const judged = toJudgedRule(rule);
  return {
    id: rule.id,
    pattern: rule.pattern,
    effect: judged.effect,
    scope: judged.scope,
    mode: judged.mode,
    requiredApprovals: rule.requiredApprovals === 2 ? 2 : 1,
    expiresAt: rule.expiresAt?.toISOString() ?? null,
    createdBy: rule.createdBy,
    createdAt: rule.createdAt.toISOString(),
  };
}
