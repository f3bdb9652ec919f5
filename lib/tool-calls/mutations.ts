import type { AgentActor } from "../auth/actor";
import { lockActingAgent } from "../agents/data";
import type { Db } from "../db";
import { appendEvent } from "../events/mutations";
import type { Agent, Prisma, PrismaClient, Request } from "../generated/prisma/client";
import { decideGate } from "../shared/protocol/gate";
import { refuseWhileStopping } from "../shared/protocol/stop-gate";
import { getProtocolType } from "../protocol/registry";
import { classifyConnectorCall, decideConnectorGate } from "../protocol/connector-gate";
import type { GateVerdict } from "../shared/protocol/gate";
import { hashToolCall } from "../protocol/tool-approval";
import { loadShellParser } from "../shared/protocol/shell-command";
import {
  classifyToolCall,
  isBelowWorkspaceRoot,
  workspaceRootOf,
  type ToolRisk,
} from "../shared/protocol/tool-risk";
import { connectorCwdOf } from "../shared/agents/schema";
import { createRequestInTransaction } from "../requests/mutations";
import { raiseRequiredApprovals } from "../requests/approvals";
import { decideWithRules, type RuleApprovals } from "../rules/evaluate";
import { refuseEditsByRules } from "../rules/edited-call";
import type { ToolCallInput, ToolVerdict } from "./schema";
import { approvedVerdict, findEditedApprovalFor } from "./edited-approval";
import { isSameBase, refuseChangedFile } from "./file-guard";
import { inTransaction } from "../transaction";
import { rememberVerdictFacts, tryRecordCommonVerdict } from "./common-verdict";
import { databaseNow } from "../database-clock";
import { toRecordedRisk, toStoredRisk } from "../protocol/stored-risk";

/** This work's tool approvals of exactly this call, newest first. */
export async function approvalsOfCall(tx: Db, agent: Agent, callHash: string) {
  return tx.request.findMany({
    where: {
      agentId: agent.id,
      incarnation: agent.incarnation,
      // Approvals are fenced to the work they were asked for; a task switch voids them.
      workVersion: agent.workVersion,
      taskId: agent.taskId,
      type: "tool_approval",
      payload: { path: ["callHash"], equals: callHash },
    },
    orderBy: { createdAt: "desc" },
  });
}

/**
 * The verdict of an approval the Lead gave this call and no call has used yet: of the call as
 * asked, or of the Lead's edit of another call into this one. Null when there is none.
 *
 * An approval counts only if as many Leads gave it as the rules now ask for this call: a card the
 * agent raised itself (`POST /requests`) was made without the rules, and one Lead's click on it
 * ran a call a two-Lead rule covers.
 */
async function spendApprovalOfCall(
  tx: Db,
  agent: Agent,
  input: ToolCallInput,
  callHash: string,
  earlier: Request[],
  { requiredApprovals }: RuleApprovals,
): Promise<ToolVerdict | null> {
  for (const request of earlier) {
    const isEnough = request.requiredApprovals >= requiredApprovals;
    if (request.status === "approved" && !request.approvalUsed && isEnough) {
      return (
        refuseChangedFile(request.payload, input.file, request.id) ??
        (await refuseEditsByRules(tx, agent, request, input)) ??
        approvedVerdict(request, input.canRunEdits === true)
      );
    }
  }
  const edited = await findEditedApprovalFor(tx, agent, callHash);
  // One Lead's edit is no approval for a call a two-Lead rule covers: that call gets its own card.
  if (edited && !(await refuseEditsByRules(tx, agent, edited, input))) {
    return (
      refuseChangedFile(edited.payload, input.file, edited.id) ?? {
        allowed: true,
        requestId: edited.id,
      }
    );
  }
  return null;
}

/**
 * A risky call runs only on the Lead's approval of that exact call (bound by hash), once. The gate
 * itself raises the request, so an agent cannot skip asking.
 */
async function decideRiskyCall(
  tx: Db,
  agent: Agent,
  input: ToolCallInput,
  risk: ToolRisk,
  reason: string,
  approvals: RuleApprovals,
): Promise<ToolVerdict> {
  const callHash = hashToolCall(input.tool, input.args, input.cwd);
  const earlier = await approvalsOfCall(tx, agent, callHash);
  const approved = await spendApprovalOfCall(tx, agent, input, callHash, earlier, approvals);
  if (approved) return approved;
  const latest = earlier[0];
  // A card whose diff is of another file than the one found now is superseded by a new card.
  if (latest?.status === "pending" && isSameBase(latest.payload, input.file)) {
    // A two-Lead rule made while the card waited holds it too: the stricter answer wins.
    await raiseRequiredApprovals(tx, latest, approvals.requiredApprovals);
    return {
      allowed: false,
      code: "TOOL_APPROVAL_PENDING",
      reason: `waiting for the Lead to approve: ${reason}`,
      requestId: latest.id,
    };
  }
  if (latest && (latest.status === "rejected" || latest.status === "expired")) {
    return {
      allowed: false,
      code: "TOOL_APPROVAL_DENIED",
      reason: `the Lead did not approve this exact call (${latest.feedback ?? latest.status}); change it or ask again with a reason`,
      requestId: latest.id,
    };
  }
  const { request } = await createRequestInTransaction(tx, {
    definition: getProtocolType("tool_approval"),
    direction: "agent_to_lead",
    agentId: agent.id,
    // The same parse and classes the gate judged, so the Lead's card cannot disagree with it.
    payload: {
      tool: input.tool,
      args: input.args as Prisma.InputJsonObject,
      reason,
      // The console labels a reason as the gate's only by this: an agent's own card cannot carry it.
      reasonBy: "gate",
      callHash,
      risk: toStoredRisk(risk),
      ...(input.cwd ? { cwd: input.cwd } : {}),
      ...(input.file ? { file: input.file } : {}),
    },
    timeoutSeconds: input.timeoutSeconds,
    // A two-Lead ask rule matched: the request counts the Leads (lib/requests/approvals.ts).
    requiredApprovals: approvals.requiredApprovals,
  });
  return {
    allowed: false,
    code: "TOOL_APPROVAL_REQUIRED",
    reason: `needs the Lead's approval: ${reason}`,
    requestId: request.id,
  };
}

/** A connected session's calls are judged by the connector's rules (lib/protocol/connector-gate.ts). */
function isConnected(agent: Pick<Agent, "connectorKey">): boolean {
  return agent.connectorKey !== null;
}

/**
 * The directory a connected session's call is judged against. A call's own directory may narrow
 * the session's (a `cd` into a subdirectory), never widen it: a shell that stands above or beside
 * the session's directory (`cd ..` approved once) has no directory that bounds its reads.
 */
function judgedCwdOf(agent: Pick<Agent, "connector">, callCwd: string | undefined) {
  const sessionCwd = connectorCwdOf(agent.connector);
  if (callCwd === undefined) return sessionCwd;
  const sessionRoot = workspaceRootOf(sessionCwd);
  return sessionRoot !== null && isBelowWorkspaceRoot(callCwd, sessionRoot) ? callCwd : undefined;
}

/** The server's gate verdict for one tool call. Every attempt is recorded, allowed or not. */
export async function recordToolCall(
  db: PrismaClient,
  actor: AgentActor,
  input: ToolCallInput,
): Promise<ToolVerdict> {
  // The grammar may still be loading, and the agent's row lock should not wait for it: load it
  // and classify for a worker before the transaction. A connected session's call is judged inside,
  // against its own directory (the call's, or the session's), which is known once the row is read.
  await loadShellParser();
  const workerRisk = await classifyToolCall(input.tool, input.args);
  const common = await tryRecordCommonVerdict(db, actor, input, workerRisk);
  if (common) return common;
  return inTransaction(db, async (tx) => {
    const agent = await lockActingAgent(tx, actor.agentId, actor.incarnation);
    rememberVerdictFacts(agent);
    const isStopping = agent.status === "stopping";
    const risk = isConnected(agent)
      ? await classifyConnectorCall(input.tool, input.args, judgedCwdOf(agent, input.cwd))
      : workerRisk;
    const gateVerdict: GateVerdict | ReturnType<typeof decideConnectorGate> = isConnected(agent)
      ? decideConnectorGate(agent.gate, isStopping, risk)
      : (refuseWhileStopping(isStopping, input.tool) ?? decideGate(agent.gate, input.tool, risk));
    const { verdict, trace } = await decideWithRules(tx, agent, input, risk, gateVerdict, {
      spendApproved: async () => {
        const callHash = hashToolCall(input.tool, input.args, input.cwd);
        return spendApprovalOfCall(
          tx,
          agent,
          input,
          callHash,
          await approvalsOfCall(tx, agent, callHash),
          // An allow rule asks for no Lead at all; the Lead's own yes, spent first, is one.
          { requiredApprovals: 1 },
        );
      },
      decide: (why, approvals) => decideRiskyCall(tx, agent, input, risk, why, approvals),
    });
    // A session sends no heartbeats between calls: each call is its sign of life.
    if (isConnected(agent)) {
      await tx.agent.update({ where: { id: agent.id }, data: { lastHeartbeatAt: databaseNow() } });
    }
    await tx.toolCall.create({
      data: {
        agentId: agent.id,
        incarnation: agent.incarnation,
        tool: input.tool,
        // What will run: the Lead's edited arguments when the approval carries them.
        args: (verdict.args ?? input.args) as Prisma.InputJsonObject,
        gate: agent.gate,
        isAllowed: verdict.allowed,
        code: verdict.code ?? null,
        reason: verdict.reason ?? null,
        risk: toRecordedRisk(risk),
        requestId: verdict.requestId ?? null,
      },
    });
    await appendEvent(
      tx,
      verdict.allowed ? "tool.allowed" : "tool.blocked",
      `agent:${agent.name}`,
      {
        agent: agent.name,
        tool: input.tool,
        gate: agent.gate,
        riskClass: risk.class,
        ...(verdict.code ? { code: verdict.code } : {}),
        ...(verdict.requestId ? { requestId: verdict.requestId } : {}),
        ...trace,
      },
    );
    return verdict;
  });
}
