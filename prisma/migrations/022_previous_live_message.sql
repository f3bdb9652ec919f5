-- Up Migration

-- The live message an agent's incarnation received before its newest one (decision 040). The
-- common decision calls it right after `decide_common_request`, in the same statement and under
-- the agent's row lock that function took: every message to an agent is written under that lock,
-- so the newest is the decision's own and the one before it is final. A long-poll woken by the
-- decision answers with the decision's message only when this one is at or below the cursor it
-- read after; otherwise a message the bridge never published (an id it passed as a gap, one
-- committed before it started) lies between, and the long-poll reads. PL/pgSQL and VOLATILE, so
-- its query takes a snapshot of its own, after the decision, and is never inlined into the caller's.
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

-- Down Migration

DROP FUNCTION previous_live_message_id(uuid, integer);
