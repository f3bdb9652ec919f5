import type { Db } from "../db";
import { AppError } from "../errors";

import { loadShellParser } from "../shared/protocol/shell-command";
import { matchesPattern } from "../shared/rules/match";
import { parseRulePattern } from "../shared/rules/pattern";
import { isInScope } from "../shared/rules/verdict";
import { prepareAgentCall, ruleSubjectOf } from "./evaluate";
import type { PreviewRuleInput } from "./schema";
import { toRuleView, type RuleView } from "./views";

/** The Rules page shows every rule, expired ones too (so they can be renewed or deleted). */
export async function listRules(db: Db): Promise<RuleView[]> {
  const rules = await db.rule.findMany({ orderBy: { createdAt: "desc" }, take: 1_000 });
  return rules.map(toRuleView);
}

/** A preview reads this many of the newest tool approvals: enough to judge, cheap to run. */
export const PREVIEW_WINDOW = 2_000;

/**
 * How many past tool approvals (approved or not) an `allow` with this pattern and scope would
 * have let through without a card, judged exactly as the gate judges: the Lead sees the reach of
 * a rule before making it.
 */
export async function previewRule(db: Db, input: PreviewRuleInput): Promise<{ matches: number }> {
  const parsed = parseRulePattern(input.pattern);
  if (!parsed.ok) throw new AppError("INVALID_RULE", `pattern: ${parsed.error}`);
  await loadShellParser();
  const requests = await db.request.findMany({
    where: { type: "tool_approval" },
    orderBy: { createdAt: "desc" },
    take: PREVIEW_WINDOW,
    select: {
      payload: true,
      agent: {
        select: { name: true, role: true, ownerTokenId: true, connector: true, connectorKey: true },
      },
    },
  });
  let matches = 0;
  for (const { payload, agent } of requests) {
    if (!isInScope(input.scope, ruleSubjectOf(agent))) continue;
    const call = payload as { tool?: unknown; args?: unknown; cwd?: unknown };
    if (typeof call.tool !== "string" || typeof call.args !== "object" || call.args === null) {
      continue;
    }
    const prepared = prepareAgentCall(
      agent,
      call.tool,
      call.args as Record<string, unknown>,
      typeof call.cwd === "string" ? call.cwd : undefined,
    );
    if (matchesPattern(parsed.pattern, prepared, "surely")) matches += 1;
  }
  return { matches };
}

/** Approvals of the same call (tool and arguments, any directory) before the card suggests a rule. */
export const SUGGEST_AFTER_APPROVALS = 3;
const SUGGESTION_WINDOW_DAYS = 30;

/**
 * How often a person approved this request's exact tool and arguments in the last 30 days, for
 * any agent and in any directory: the same approval given again and again is a rule in waiting.
 * Rule approvals do not count; they already are one.
 */
export async function suggestRule(
  db: Db,
  requestId: string,
): Promise<{ approvals: number; isSuggested: boolean }> {
  const request = await db.request.findUnique({
    where: { id: requestId },
    select: { type: true, payload: true },
  });
  if (!request) throw new AppError("REQUEST_NOT_FOUND", `no request ${requestId}`);
  const payload = request.payload as {
    tool?: unknown;
    args?: unknown;
    risk?: { isBeyondAllowRules?: unknown };
  };
  // A rule that could never apply is not offered (a write of a session's hooks, say).
  if (
    request.type !== "tool_approval" ||
    typeof payload.tool !== "string" ||
    payload.risk?.isBeyondAllowRules === true
  ) {
    return { approvals: 0, isSuggested: false };
  }
  const [row] = await db.$queryRaw<{ approvals: bigint }[]>`
    SELECT count(*) AS approvals FROM requests
    WHERE type = 'tool_approval' AND status = 'approved'
      AND created_at > now() - make_interval(days => ${SUGGESTION_WINDOW_DAYS})
      AND decided_by->>'kind' IN ('human', 'token')
      AND payload->'tool' = ${JSON.stringify(payload.tool)}::jsonb
      AND payload->'args' = ${JSON.stringify(payload.args ?? {})}::jsonb`;
  const approvals = Number(row?.approvals ?? 0);
  return { approvals, isSuggested: approvals >= SUGGEST_AFTER_APPROVALS };
}
