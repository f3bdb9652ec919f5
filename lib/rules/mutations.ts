import type { HumanActor } from "../auth/actor";
import type { Db } from "../db";
import { AppError } from "../errors";
import { appendEvent } from "../events/mutations";
import type { PrismaClient, Rule } from "../generated/prisma/client";
import { hasDisplayWarning, inspectText } from "../shared/display/visible-text";
import { parseRulePattern } from "../shared/rules/pattern";
import { lockLiveCaller } from "../tokens/data";
import { inTransaction } from "../transaction";
import { raisePendingCardsForRule } from "./raise-pending";
import { evictRulesAfterCommit } from "./rule-cache";
import type { CreateRuleInput, UpdateRuleInput } from "./schema";
import { toRuleView, type RuleView } from "./views";
import { databaseNow, databaseNowMs } from "../database-clock";

/**
 * Every write checks the pattern, so the gate never meets one it cannot read, nor a Lead one that
 * reads as something else: what a card warns of ("Always allow this" makes no rule from such a
 * call) no rule may hold. Only writes: the gate still judges a rule stored before, so a deny of
 * that kind goes on denying.
 */
export function checkRulePattern(pattern: string): void {
  const parsed = parseRulePattern(pattern);
  if (!parsed.ok) throw new AppError("INVALID_RULE", `pattern: ${parsed.error}`);
  if (hasDisplayWarning(inspectText(pattern))) {
    throw new AppError(
      "INVALID_RULE",
      "pattern: may not hold hidden, right-to-left, look-alike or stacked characters; a Lead would not read it as what it matches",
    );
  }
}

/** What a rule's fields must agree on, beyond each one's own schema. */
function checkRuleShape(rule: {
  effect: string;
  requiredApprovals: number;
  expiresAt: Date | null;
}): void {
  if (rule.requiredApprovals === 2 && rule.effect !== "ask") {
    throw new AppError(
      "INVALID_RULE",
      "requiredApprovals: only an ask rule raises a card, so only it can need two Leads",
    );
  }
  if (rule.expiresAt !== null && rule.expiresAt.getTime() <= databaseNowMs()) {
    throw new AppError("INVALID_RULE", "expiresAt: the expiry is already past");
  }
}

/**
 * The end a write names: a time, or a span from now on the database's clock; undefined when it
 * names none (an update then keeps the rule's).
 */
function endNamedBy(input: {
  expiresAt?: string | null;
  expiresInSeconds?: number;
}): Date | null | undefined {
  if (input.expiresInSeconds !== undefined) {
    return new Date(databaseNowMs() + input.expiresInSeconds * 1_000);
  }
  if (input.expiresAt === undefined) return undefined;
  return input.expiresAt === null ? null : new Date(input.expiresAt);
}

function actorLabel(actor: HumanActor): string {
  return actor.via === "token" ? `${actor.email} (token '${actor.tokenName}')` : actor.email;
}

async function recordChange(
  tx: Db,
  kind: "rule.created" | "rule.updated" | "rule.deleted",
  rule: Rule,
  actor: HumanActor,
): Promise<void> {
  // This node's next verdict reads the change; other nodes hear migration 015's trigger.
  evictRulesAfterCommit(tx);
  await appendEvent(tx, kind, `rule:${rule.id}`, {
    ruleId: rule.id,
    pattern: rule.pattern,
    effect: rule.effect,
    mode: rule.mode,
    by: actorLabel(actor),
  });
}

export async function createRule(
  db: PrismaClient,
  actor: HumanActor,
  input: CreateRuleInput,
): Promise<RuleView> {
  checkRulePattern(input.pattern);
  const expiresAt = endNamedBy(input) ?? null;
  checkRuleShape({ ...input, expiresAt });
  return inTransaction(db, async (tx) => {
    await lockLiveCaller(tx, actor);
    const rule = await tx.rule.create({
      data: {
        pattern: input.pattern,
        effect: input.effect,
        scope: input.scope,
        mode: input.mode,
        requiredApprovals: input.requiredApprovals,
        expiresAt,
        createdBy: actorLabel(actor),
      },
    });
    await raisePendingCardsForRule(tx, rule);
    await recordChange(tx, "rule.created", rule, actor);
    return toRuleView(rule);
  });
}

async function lockRule(tx: Db, id: string): Promise<Rule> {
  const [locked] = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM rules WHERE id = ${id}::uuid FOR UPDATE`;
  const rule = locked ? await tx.rule.findUnique({ where: { id } }) : null;
  if (!rule) throw new AppError("RULE_NOT_FOUND", `no rule ${id}`);
  return rule;
}

export async function updateRule(
  db: PrismaClient,
  actor: HumanActor,
  id: string,
  patch: UpdateRuleInput,
): Promise<RuleView> {
  return inTransaction(db, async (tx) => {
    await lockLiveCaller(tx, actor);
    const current = await lockRule(tx, id);
    const newEnd = endNamedBy(patch);
    const next = {
      effect: patch.effect ?? current.effect,
      requiredApprovals: patch.requiredApprovals ?? current.requiredApprovals,
      expiresAt: newEnd === undefined ? current.expiresAt : newEnd,
    };
    // An unchanged past expiry is no reason to refuse changing something else.
    checkRuleShape({ ...next, expiresAt: newEnd ?? null });
    const rule = await tx.rule.update({
      where: { id },
      data: {
        effect: next.effect,
        requiredApprovals: next.requiredApprovals,
        expiresAt: next.expiresAt,
        ...(patch.mode ? { mode: patch.mode } : {}),
        updatedAt: databaseNow(),
      },
    });
    await raisePendingCardsForRule(tx, rule);
    await recordChange(tx, "rule.updated", rule, actor);
    return toRuleView(rule);
  });
}

export async function deleteRule(
  db: PrismaClient,
  actor: HumanActor,
  id: string,
): Promise<RuleView> {
  return inTransaction(db, async (tx) => {
    await lockLiveCaller(tx, actor);
    const rule = await lockRule(tx, id);
    await tx.rule.delete({ where: { id } });
    await recordChange(tx, "rule.deleted", rule, actor);
    return toRuleView(rule);
  });
}
