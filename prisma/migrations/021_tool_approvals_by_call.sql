-- Up Migration

-- The gate's two lookups of a tool call's approvals (decision 039), by what Prisma sends: every
-- approval of this exact call in the agent's current work (lib/tool-calls/mutations.ts,
-- approvalsOfCall, `payload #> '{callHash}'`), and a Lead's edit approved into this call
-- (lib/tool-calls/edited-approval.ts, `response #> '{approvedCallHash}'`). Both read every request
-- the agent ever made (requests_agent_id_created_at_idx, then a filter): 15 ms for an agent with
-- 30,000, on the path of each risky call, card and retry. Prisma sends them unnamed, so each is
-- planned with its values and the path is a constant the expression matches.
CREATE INDEX requests_tool_approvals_by_call_idx ON requests (agent_id, (payload #> '{callHash}'))
  WHERE type = 'tool_approval';
-- Only a decision with a response can carry an edit; rules' approvals have none.
CREATE INDEX requests_tool_approvals_by_edit_idx
  ON requests (agent_id, (response #> '{approvedCallHash}'))
  WHERE type = 'tool_approval' AND response IS NOT NULL;

-- Down Migration

DROP INDEX requests_tool_approvals_by_edit_idx;
DROP INDEX requests_tool_approvals_by_call_idx;
