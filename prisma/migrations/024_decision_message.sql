-- Up Migration

-- The message a common decision sent its agent, and the live message before it (decisions 040 and
-- 052). The common decision calls it right after `decide_common_request`, in the same statement
-- and under the agent's row lock that function took: every message to an agent is written under
-- that lock, so the newest live one of the request's incarnation is the decision's own, and the
-- one before it is final. With the message's id and time the node that decided wakes the agent's
-- long-poll at once, without waiting for the bridge, and answers it with the message when the one
-- before is at or below its cursor. `at` is formatted as the events' NOTIFY payload formats it
-- (migration 016), so the answer is what the woken read would have returned. PL/pgSQL and
-- VOLATILE, so its query takes a snapshot of its own, after the decision, and is never inlined
-- into the caller's.
CREATE FUNCTION decision_message(p_agent_id uuid, p_incarnation integer)
RETURNS TABLE (message_id bigint, message_at text, previous_message_id bigint) AS $$
BEGIN
  RETURN QUERY
  WITH newest AS (
    SELECT id, created_at FROM messages
    WHERE agent_id = p_agent_id AND incarnation = p_incarnation AND cancelled_at IS NULL
    ORDER BY id DESC
    LIMIT 2
  )
  SELECT decided.id,
         to_char(decided.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
         (SELECT min(id) FROM newest WHERE id < decided.id)
  FROM (SELECT * FROM newest ORDER BY id DESC LIMIT 1) decided;
END;
$$ LANGUAGE plpgsql VOLATILE;

DROP FUNCTION previous_live_message_id(uuid, integer);

-- Down Migration

CREATE FUNCTION previous_live_message_id(p_agent_id uuid, p_incarnation integer)
RETURNS bigint AS $$
BEGIN
  RETURN (
    SELECT id FROM messages
    WHERE agent_id = p_agent_id AND incarnation = p_incarnation AND cancelled_at IS NULL
    ORDER BY id DESC
    OFFSET 1 LIMIT 1
  );
END;
$$ LANGUAGE plpgsql VOLATILE;

DROP FUNCTION decision_message(uuid, integer);
