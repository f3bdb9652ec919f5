import type { Db } from "../db";
import type { Agent, Request } from "../generated/prisma/client";
import { toolEditsOf } from "../shared/protocol/edits";
import { loadShellParser } from "../shared/protocol/shell-command";
import { judgeByRules } from "../shared/rules/verdict";
import type { ToolCallInput, ToolVerdict } from "../tool-calls/schema";
import { prepareAgentCall, ruleSubjectOf } from "./evaluate";
import { loadLiveRules } from "./rule-cache";
import { databaseNow } from "../database-clock";

/**
 * The rules' say on what an approval with the Lead's edits would run. The gate judged the call the
 * agent asked for; an edit can make it another call, which a deny rule may forbid or a two-Lead
 * rule may keep from any single Lead. Null when there are no edits or the rules let them run.
 */
export async function refuseEditsByRules(
  tx: Db,
  agent: Agent,
  request: Pick<Request, "id" | "response" | "requiredApprovals">,
  input: Pick<ToolCallInput, "tool" | "cwd">,
): Promise<ToolVerdict | null> {
  const edits = toolEditsOf(request.response);
  if (!edits) return null;
  const now = databaseNow();
  const rules = await loadLiveRules(tx, now);
  if (rules.length === 0) return null;
  await loadShellParser();
  const call = prepareAgentCall(agent, input.tool, edits.editedArgs, input.cwd);
  const { rule } = judgeByRules(rules, call, ruleSubjectOf(agent), now);
  if (rule?.effect === "deny") {
    return {
      allowed: false,
      code: "RULE_DENIED",
      reason: `the Lead's edited ${input.tool} call is denied by rule ${rule.pattern} (${rule.id})`,
      requestId: request.id,
      ruleId: rule.id,
    };
  }
  if (rule?.effect === "ask" && rule.requiredApprovals > request.requiredApprovals) {
    return {
      allowed: false,
      code: "TOOL_APPROVAL_DENIED",
      reason: `the Lead's edited ${input.tool} call needs two Leads by rule ${rule.pattern} (${rule.id}); one approved it: ask for that call itself`,
      requestId: request.id,
      ruleId: rule.id,
    };
  }
  return null;
}
