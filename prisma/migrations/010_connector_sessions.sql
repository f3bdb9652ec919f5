-- Up Migration

-- A Claude Code session (or one of its teammates) registered through a `connect` token
-- (docs/decisions/017). `connector_key` names it uniquely: the token, the session id and the
-- teammate id, so the same session always finds the same agent, also under concurrent calls.
-- `connector` holds what the board shows ({sessionId, agentId, agentType, cwd, model, parent}).
ALTER TABLE agents ADD COLUMN connector_key text;
ALTER TABLE agents ADD COLUMN connector jsonb;
CREATE UNIQUE INDEX agents_connector_key_key ON agents (connector_key);
ALTER TABLE agents ADD CONSTRAINT agents_connector_has_key
  CHECK ((connector_key IS NULL) = (connector IS NULL));

-- Claude Code runs a turn's tool calls in parallel: an agent may wait on several tool approvals at
-- once, one per distinct call (its hash), each its own card. Every other type keeps one pending
-- request per (agent, type).
DROP INDEX requests_one_pending_per_agent_type;
CREATE UNIQUE INDEX requests_one_pending_per_agent_type ON requests (agent_id, type)
  WHERE status = 'pending' AND type <> 'tool_approval';
CREATE UNIQUE INDEX requests_one_pending_per_tool_call ON requests (agent_id, (payload ->> 'callHash'))
  WHERE status = 'pending' AND type = 'tool_approval';

-- Down Migration

DROP INDEX requests_one_pending_per_tool_call;
DROP INDEX requests_one_pending_per_agent_type;
CREATE UNIQUE INDEX requests_one_pending_per_agent_type ON requests (agent_id, type) WHERE status = 'pending';
ALTER TABLE agents DROP CONSTRAINT agents_connector_has_key;
DROP INDEX agents_connector_key_key;
ALTER TABLE agents DROP COLUMN connector;
ALTER TABLE agents DROP COLUMN connector_key;
