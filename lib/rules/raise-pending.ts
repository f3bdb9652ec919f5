import type { Db } from "../db";
import type { Rule } from "../generated/prisma/client";
import { loadShellParser } from "../shared/protocol/shell-command";
import { doesRuleMatch } from "../shared/rules/verdict";
import { prepareAgentCall, ruleSubjectOf } from "./evaluate";
import { toJudgedRule } from "./views";
import { databaseNow } from "../database-clock";

/**
 * A two-Lead rule also holds the cards already waiting for a call it matches (decision 023: the
 * stricter answer wins). A worker waits on its card without asking again, so the gate alone would
 * leave such a card to one Lead's click; the rule's write raises it instead, in its transaction.
 */
export async function raisePendingCardsForRule(tx: Db, stored: Rule): Promise<void> {
  const rule = toJudgedRule(stored);
  if (rule.effect !== "ask" || rule.requiredApprovals !== 2 || rule.mode !== "enforce") return;
  const pending = await tx.request.findMany({
    where: { type: "tool_approval", status: "pending", target: "lead", requiredApprovals: 1 },
    select: {
      id: true,
      payload: true,
      agent: {
        select: { name: true, role: true, ownerTokenId: true, connector: true, connectorKey: true },
      },
    },
  });
  if (pending.length === 0) return;
  await loadShellParser();
  const now = databaseNow();
  const raised = pending.filter(({ payload, agent }) => {
    const call = payload as { tool?: unknown; args?: unknown; cwd?: unknown };
    if (typeof call.tool !== "string" || typeof call.args !== "object" || call.args === null) {
      return false;
    }
    const prepared = prepareAgentCall(
      agent,
      call.tool,
      call.args as Record<string, unknown>,
      typeof call.cwd === "string" ? call.cwd : undefined,
    );
    return doesRuleMatch(rule, prepared, ruleSubjectOf(agent), now);
  });
  if (raised.length === 0) return;
  await tx.request.updateMany({
    where: { id: { in: raised.map((request) => request.id) }, status: "pending" },
    data: { requiredApprovals: 2 },
  });
}
