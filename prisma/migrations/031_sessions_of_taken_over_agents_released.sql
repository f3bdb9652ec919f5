-- Up Migration

-- A name registered again by another owner is no longer its session's (decision 075): the
-- session's next connect gets an agent of its own. Before, the Lead's re-registration kept the
-- session's key, and the session took the agent back, token and all. The key names the token that
-- made it; a row whose owner is another, or none, lets its session go.
UPDATE agents SET connector_key = NULL, connector = NULL, tool_host = NULL
WHERE connector_key IS NOT NULL
  AND (owner_token_id IS NULL OR split_part(connector_key, '/', 1) <> owner_token_id::text);

-- Down Migration

-- Nothing to undo: those sessions no longer owned the agents they named.
SELECT 1;
