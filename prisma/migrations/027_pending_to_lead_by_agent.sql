-- Up Migration

-- An agent incarnation's requests pending on the Lead (decision 059). A common decision of a tool
-- call (`decide_common_requests`, migration 025) asks whether another is pending, to leave the
-- agent waiting on the Lead. The unique index on (agent, incarnation, idempotency key) answers
-- that too, through every request the incarnation ever made, and the function's plan made while
-- the table was new took it: each tool call's approval read its agent's history. This index
-- holds only what is pending, and its predicate is the function's own constants.
CREATE INDEX requests_pending_to_lead_idx ON requests (agent_id, incarnation)
  WHERE status = 'pending' AND target = 'lead';

-- Down Migration

DROP INDEX requests_pending_to_lead_idx;
