-- Up Migration

-- An agent incarnation's live messages in id order (decision 059). Every common decision reads
-- the newest two (`decision_message`, migration 024), and every inbox read the first after a
-- cursor. Through `messages_agent_id_id_idx` (agent, id) the incarnation and the cancellation are
-- filters, and a plan made while the table was new (a PL/pgSQL function's, kept by each
-- connection) read every message of the agent and sorted them: a long-lived agent's decisions
-- grew slower with its history until autovacuum analysed the table. Here the newest two are the
-- index's last two entries for the agent and incarnation, whenever the plan was made. A message
-- to the Lead names no agent and is not kept here.
CREATE INDEX messages_live_by_agent_idx ON messages (agent_id, incarnation, id)
  WHERE cancelled_at IS NULL AND agent_id IS NOT NULL;

-- Down Migration

DROP INDEX messages_live_by_agent_idx;
