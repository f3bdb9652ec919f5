import path from "node:path/posix";
import type { RuleScope } from "../api/rule";
import { matchesPattern, type PreparedCall } from "./match";
import { parseRulePattern } from "./pattern";

/** What a rule needs to be judged; the stored row carries more. */
export type JudgedRule = {
  id: string;
  pattern: string;
  effect: "allow" | "ask" | "deny";
  scope: RuleScope;
  mode: "enforce" | "shadow";
  requiredApprovals: number;
  expiresAt: Date | null;
  createdAt: Date;
};

/** Who is calling: what a rule's scope is compared with. */
export type RuleSubject = {
  agent: string;
  /** Null when the agent's role is its registering token's claim, not the Lead's. */
  role: string | null;
  /** The `connect` token that registered the agent, if any. */
  tokenId: string | null;
  /** A connected session's directory; null for a worker. */
  projectCwd: string | null;
};

export type RulesVerdict<R extends JudgedRule> = {
  /** The enforced rule that decides, by precedence; null when none matches. */
  rule: R | null;
  /** What the strongest matching shadow rule would have decided; it changes nothing. */
  shadow: R | null;
};

const EFFECT_RANK = { deny: 3, ask: 2, allow: 1 } as const;

function isAtOrBelow(directory: string, ancestor: string): boolean {
  const dir = path.normalize(directory).replace(/\/+$/, "") || "/";
  const top = path.normalize(ancestor).replace(/\/+$/, "") || "/";
  return top === "/" ? dir.startsWith("/") : dir === top || dir.startsWith(`${top}/`);
}

export function isInScope(scope: RuleScope, subject: RuleSubject): boolean {
  switch (scope.kind) {
    case "agent":
      return scope.agent === subject.agent;
    case "role":
      return subject.role !== null && scope.role === subject.role;
    case "token":
      return subject.tokenId !== null && scope.tokenId === subject.tokenId;
    case "project":
      return subject.projectCwd !== null && isAtOrBelow(subject.projectCwd, scope.cwd);
    case "everyone":
      return true;
    default: {
      const unreachable: never = scope;
      throw new Error(`unknown rule scope ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Deny beats ask beats allow; among asks the stricter (two Leads); then the oldest rule. */
function isStronger(a: JudgedRule, b: JudgedRule): boolean {
  if (EFFECT_RANK[a.effect] !== EFFECT_RANK[b.effect]) {
    return EFFECT_RANK[a.effect] > EFFECT_RANK[b.effect];
  }
  if (a.requiredApprovals !== b.requiredApprovals) {
    return a.requiredApprovals > b.requiredApprovals;
  }
  if (a.createdAt.getTime() !== b.createdAt.getTime()) {
    return a.createdAt.getTime() < b.createdAt.getTime();
  }
  return a.id < b.id;
}

/** Does this rule, live at `now` and in scope, match the call? A pattern that no longer parses never does. */
export function doesRuleMatch(
  rule: JudgedRule,
  call: PreparedCall,
  subject: RuleSubject,
  now: Date,
): boolean {
  if (rule.expiresAt !== null && rule.expiresAt.getTime() <= now.getTime()) return false;
  if (!isInScope(rule.scope, subject)) return false;
  const parsed = parseRulePattern(rule.pattern);
  if (!parsed.ok) return false;
  return matchesPattern(parsed.pattern, call, rule.effect === "allow" ? "surely" : "possibly");
}

/** The rules' verdict on one call: the enforced winner and, apart, the shadow one. */
export function judgeByRules<R extends JudgedRule>(
  rules: readonly R[],
  call: PreparedCall,
  subject: RuleSubject,
  now: Date,
): RulesVerdict<R> {
  let rule: R | null = null;
  let shadow: R | null = null;
  for (const candidate of rules) {
    if (!doesRuleMatch(candidate, call, subject, now)) continue;
    if (candidate.mode === "shadow") {
      if (shadow === null || isStronger(candidate, shadow)) shadow = candidate;
    } else if (rule === null || isStronger(candidate, rule)) {
      rule = candidate;
    }
  }
  return { rule, shadow };
}
