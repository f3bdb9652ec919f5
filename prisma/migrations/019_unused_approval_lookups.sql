-- Up Migration

-- Whether an approval has been used is asked by request id (lib/tool-calls/edited-approval.ts,
-- isApprovalUsed), on every retry of an approved call; only the calls that name an approval can
-- answer it.
CREATE INDEX tool_calls_request_id_idx ON tool_calls (request_id) WHERE request_id IS NOT NULL;

-- The approvals Leads gave an agent's tool calls, without the rules' ones: a rule-allowed verdict
-- in one statement first makes sure none of them is unused (lib/tool-calls/common-verdict.ts),
-- while the rules' approvals, one per allowed call, pile up.
CREATE INDEX requests_lead_tool_approvals_idx ON requests (agent_id)
  WHERE type = 'tool_approval' AND status = 'approved' AND decided_by ->> 'kind' <> 'rule';

-- Down Migration

DROP INDEX requests_lead_tool_approvals_idx;
DROP INDEX tool_calls_request_id_idx;
