import type { Db } from "../db";
import { appendEvent } from "../events/mutations";
import type { Agent, Prisma } from "../generated/prisma/client";
import { hashToolCall } from "../protocol/tool-approval";
import type { RequiredApprovals } from "../requests/approvals";
import { newRequestId } from "../requests/request-id";
import { connectorCwdOf } from "../shared/agents/schema";
import type { DecidedBy } from "../shared/api/request";
import { analyzeShellCommand } from "../shared/protocol/shell-command";
import { isBelowWorkspaceRoot, workspaceRootOf, type ToolRisk } from "../shared/protocol/tool-risk";
import { prepareCall, type CallLocation, type PreparedCall } from "../shared/rules/match";
import {
  judgeByRules,
  type JudgedRule,
  type RuleSubject,
  type RulesVerdict,
} from "../shared/rules/verdict";
import type { ToolCallInput, ToolVerdict } from "../tool-calls/schema";
import { loadLiveRules } from "./rule-cache";
import { databaseNow } from "../database-clock";
import { toRecordedRisk } from "../protocol/stored-risk";

type RuleAgent = Pick<Agent, "name" | "role" | "ownerTokenId" | "connector" | "connectorKey">;
type StoredRule = JudgedRule;

function sessionRootOf(agent: RuleAgent): string | null {
  return workspaceRootOf(connectorCwdOf(agent.connector));
}

/**
 * Who a rule's scope is compared with: the agent, its role, its `connect` token, its project. A
 * role counts only when a Lead gave it (the console, the server's own team): a token's holder
 * names the role of what it registers, and a `connect` token's (the model may hold it) named
 * itself a deployer to fall under the deployers' allow rules (decision 077).
 */
export function ruleSubjectOf(agent: RuleAgent): RuleSubject {
  return {
    agent: agent.name,
    role: agent.ownerTokenId === null ? agent.role : null,
    tokenId: agent.ownerTokenId,
    projectCwd: agent.connectorKey !== null ? sessionRootOf(agent) : null,
  };
}

/**
 * Where a call's relative paths start. A worker's are relative to its workspace; a connected
 * session's to its directory, or to the call's own, which must be below it. A session with no
 * directory that bounds anything (none, or `/`), or a call from above or beside it (`src/a.ts`
 * written from the project's parent is not the project's `src/a.ts`), has no location: its paths
 * match no allow, as the gate judges them bounded by nothing (`judgedCwdOf`).
 */
export function callLocationOf(agent: RuleAgent, callCwd: string | undefined): CallLocation | null {
  if (agent.connectorKey === null) return { root: null, cwd: null };
  const root = sessionRootOf(agent);
  if (root === null) return null;
  if (callCwd === undefined) return { root, cwd: root };
  return isBelowWorkspaceRoot(callCwd, root) ? { root, cwd: callCwd } : null;
}

/**
 * The call as rules see it. `judged`, the risk the gate judged these arguments by, lends its parse
 * of the same command: the rules then match what the gate classified, parsed once.
 */
export function prepareAgentCall(
  agent: RuleAgent,
  tool: string,
  args: Record<string, unknown>,
  cwd: string | undefined,
  judged?: ToolRisk,
): PreparedCall {
  const analyze = (command: string) =>
    judged?.analysis?.source === command ? judged.analysis : analyzeShellCommand(command);
  return prepareCall(tool, args, callLocationOf(agent, cwd), analyze);
}

/**
 * A call no allow rule may let through: a refused path among its reasons, no location, or a write
 * of a file that makes programs run later (`isBeyondAllowRules`).
 */
export function isBeyondAllowRules(
  agent: RuleAgent,
  input: ToolCallInput,
  risk: ToolRisk,
): boolean {
  return (
    risk.isBeyondAllowRules === true ||
    risk.reasons.some((reason) => reason.class === "refused") ||
    callLocationOf(agent, input.cwd) === null
  );
}

/** The plan gate's verdict before rules: the shape both gates (worker, connector) share. */
type GateVerdictLike =
  | { allowed: true }
  | {
      allowed: false;
      code: NonNullable<ToolVerdict["code"]>;
      reason: string;
      needsApproval?: true;
    };

/** How many Leads a card raised because of a rule needs (the two-person rule counts them). */
export type RuleApprovals = { requiredApprovals: RequiredApprovals };

/**
 * The gate's two answers for a call that needs the Lead: `spendApproved` gives the verdict of the
 * Lead's unused approval of this exact call, if there is one; `decide` also finds or raises its card.
 */
export type RiskyCallDecider = {
  spendApproved: () => Promise<ToolVerdict | null>;
  decide: (reason: string, approvals: RuleApprovals) => Promise<ToolVerdict>;
};

/** What the event of a verdict records about rules, shadow ones included. */
export type RuleTrace = { ruleId?: string; shadowRuleId?: string; shadowEffect?: string };

export type RuledVerdict = { verdict: ToolVerdict; trace: RuleTrace };

function describeRule(rule: Pick<StoredRule, "id" | "pattern">): string {
  return `rule ${rule.pattern} (${rule.id})`;
}

/** What a rule's approval of a call records: the card's payload and who decided it. */
export function ruleApprovalOf(
  input: ToolCallInput,
  risk: ToolRisk,
  rule: Pick<StoredRule, "id" | "pattern">,
): { payload: Prisma.InputJsonObject; decidedBy: DecidedBy; respondedBy: string } {
  return {
    payload: {
      tool: input.tool,
      args: input.args as Prisma.InputJsonObject,
      reason: `allowed by ${describeRule(rule)}`,
      callHash: hashToolCall(input.tool, input.args, input.cwd),
      risk: toRecordedRisk(risk),
      ...(input.cwd ? { cwd: input.cwd } : {}),
    },
    decidedBy: { kind: "rule", ruleId: rule.id, pattern: rule.pattern },
    respondedBy: `rule ${rule.pattern}`,
  };
}

/**
 * A rule's standing yes, written down like the Lead's: a tool_approval request already approved,
 * decided by the rule, which the recorded call then uses. History shows it with its rule. The
 * common verdict writes the same in one statement (lib/tool-calls/common-verdict.ts).
 */
async function approveByRule(
  tx: Db,
  agent: Agent,
  input: ToolCallInput,
  risk: ToolRisk,
  rule: StoredRule,
): Promise<string> {
  const { payload, decidedBy, respondedBy } = ruleApprovalOf(input, risk, rule);
  const now = databaseNow();
  const request = await tx.request.create({
    data: {
      id: newRequestId(),
      type: "tool_approval",
      agentId: agent.id,
      sender: agent.name,
      target: "lead",
      status: "approved",
      payload,
      respondedBy,
      respondedAt: now,
      decidedBy,
      incarnation: agent.incarnation,
      workVersion: agent.workVersion,
      taskId: agent.taskId,
      expiresAt: now,
      // Used by the call recorded with it, in this transaction.
      approvalUsed: true,
    },
  });
  await appendEvent(tx, "request.decided", `request:${request.id}`, {
    requestId: request.id,
    type: request.type,
    agent: agent.name,
    status: "approved",
    respondedBy,
    decidedBy,
  });
  return request.id;
}

/**
 * The rules' say on one call, after the plan gate (docs/decisions/022):
 * - deny blocks any call (RULE_DENIED);
 * - allow lets through a call that would need the Lead's card, never one the gate blocked or
 *   refused, nor one with a path outside the workspace among its reasons; an unused approval the
 *   Lead gave that call is spent first;
 * - ask turns a call the gate allows into a card, and a two-Lead ask raises any card it matches;
 * - shadow rules only leave a trace.
 */
export async function decideWithRules(
  tx: Db,
  agent: Agent,
  input: ToolCallInput,
  risk: ToolRisk,
  gate: GateVerdictLike,
  decideRisky: RiskyCallDecider,
): Promise<RuledVerdict> {
  const now = databaseNow();
  const rules = await loadLiveRules(tx, now);
  const gateVerdict = async (): Promise<ToolVerdict> => {
    if (gate.allowed) return { allowed: true };
    if (gate.needsApproval) return decideRisky.decide(gate.reason, { requiredApprovals: 1 });
    return { allowed: false, code: gate.code, reason: gate.reason };
  };
  if (rules.length === 0) return { verdict: await gateVerdict(), trace: {} };
  const judged: RulesVerdict<StoredRule> = judgeByRules(
    rules,
    prepareAgentCall(agent, input.tool, input.args, input.cwd, risk),
    ruleSubjectOf(agent),
    now,
  );
  const shadowTrace: RuleTrace = judged.shadow
    ? { shadowRuleId: judged.shadow.id, shadowEffect: judged.shadow.effect }
    : {};
  const rule = judged.rule;
  if (rule === null) return { verdict: await gateVerdict(), trace: shadowTrace };
  const trace = { ...shadowTrace, ruleId: rule.id };
  switch (rule.effect) {
    case "deny":
      return {
        verdict: {
          allowed: false,
          code: "RULE_DENIED",
          reason: `${input.tool} is denied by ${describeRule(rule)}`,
          ruleId: rule.id,
        },
        trace,
      };
    case "allow": {
      if (gate.allowed || !gate.needsApproval || isBeyondAllowRules(agent, input, risk)) {
        return { verdict: await gateVerdict(), trace: shadowTrace };
      }
      // The Lead's own yes to this call, given before the rule was made, is spent before the
      // rule's. One that would refuse it (edits the caller cannot run, a file changed since) does
      // not outweigh the allow the Lead made since.
      const approved = await decideRisky.spendApproved();
      if (approved?.allowed) return { verdict: approved, trace: shadowTrace };
      const requestId = await approveByRule(tx, agent, input, risk, rule);
      return { verdict: { allowed: true, requestId, ruleId: rule.id }, trace };
    }
    case "ask": {
      if (!gate.allowed && !gate.needsApproval) {
        return { verdict: await gateVerdict(), trace: shadowTrace };
      }
      const reason = gate.allowed
        ? `${describeRule(rule)} asks the Lead`
        : `${gate.reason}; ${describeRule(rule)} asks the Lead`;
      const verdict = await decideRisky.decide(reason, {
        requiredApprovals: rule.requiredApprovals === 2 ? 2 : 1,
      });
      return { verdict: { ...verdict, ruleId: rule.id }, trace };
    }
    default: {
      const unreachable: never = rule.effect;
      throw new Error(`unknown rule effect ${String(unreachable)}`);
    }
  }
}
