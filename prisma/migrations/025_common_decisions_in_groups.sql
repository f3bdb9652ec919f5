-- Up Migration

-- The common decisions of a group in one statement (lib/requests/common-decision.ts, decision
-- 054): each one Lead approving or rejecting, as asked, a pending plan or tool call that needs one
-- approval. For each decision it does what `decide_common_request` (migration 018) did, in the
-- same order and with the same rows and events, then reads its message as `decision_message`
-- (migration 024) does, under the same lock. It returns a row for each decision it wrote, by the
-- position the caller gave it; a decision it does not recognise writes nothing and gets no row,
-- and the caller takes the full path for it, which decides the unusual case or produces the right
-- refusal (ALREADY_DECIDED, STALE_INCARNATION, REQUEST_EXPIRED, SECOND_LEAD_REQUIRED, …).
--
-- A group never waits on a row, so no row lock deadlocks it, and nothing one of its decisions
-- meets fails it (a table lock, as a migration takes, can still make its writes wait; a deadlock
-- PostgreSQL breaks by rolling the group back sends every decision of it to the full path):
-- - the agent's lock, then the request's, are taken with SKIP LOCKED: a decision whose agent or
--   request another transaction holds takes the full path, which waits for the locks. A group
--   holds the request rows it decided until it commits; a writer that locks request rows without
--   their agents' (a two-Lead rule raising the pending cards it matches) would otherwise close a
--   cycle with it. Not key updates, so a request or message inserted for the agent (a key share)
--   is not a reason to skip.
-- - every check is made on the locked request, so neither the two-Lead check (migration 012) nor
--   the late-decision trigger (migration 006) can raise.
-- - every decision after the first of one agent in the group sees the first's writes, as the
--   next decision would.
--
-- PL/pgSQL, not one statement of CTEs: every statement after the locks reads a fresh snapshot, so
-- what another transaction committed before them (a new request of the same agent) is seen, as
-- in the full path.
CREATE FUNCTION decide_common_requests(p_decisions jsonb)
RETURNS TABLE (
  decision_position integer,
  decided requests,
  message_id bigint,
  message_at text,
  previous_message_id bigint
) AS $$
DECLARE
  decision record;
  asked_agent_id uuid;
  asked requests;
  agent agents;
  sent_id bigint;
BEGIN
  FOR decision IN
    SELECT * FROM jsonb_to_recordset(p_decisions) AS d(
      "position" integer, "requestId" text, type text, status request_status, approve boolean,
      feedback text, "respondedBy" text, "decidedBy" jsonb, at timestamptz,
      "responseType" text,
      -- The gate after the decision; null leaves it alone.
      gate gate_state,
      -- The agent waits on the Lead while another request of its incarnation does (tool calls).
      "isWaitingWhileOthersPend" boolean)
    ORDER BY "position"
  LOOP
    -- A request's agent never changes: read it to take the agent's lock first, the order every
    -- writer of an agent's requests takes them in.
    SELECT agent_id INTO asked_agent_id FROM requests WHERE id = decision."requestId";
    CONTINUE WHEN NOT FOUND;
    -- Every decision on an agent's requests takes this lock first (lib/agents/data.ts lockAgent).
    SELECT * INTO agent FROM agents WHERE id = asked_agent_id FOR NO KEY UPDATE SKIP LOCKED;
    CONTINUE WHEN NOT FOUND;
    -- Then the request's own row, the newest version of it, held until the group commits.
    SELECT * INTO asked FROM requests WHERE id = decision."requestId"
    FOR NO KEY UPDATE SKIP LOCKED;
    CONTINUE WHEN NOT FOUND;

    -- A late decision is left to the full path, which expires the request (REQUEST_EXPIRED). Judged
    -- on the locked row, nothing checked here can change before the group commits: the two-Lead
    -- check (migration 012) and the late-decision trigger (migration 006) cannot raise.
    CONTINUE WHEN asked.type <> decision.type OR asked.target <> 'lead'
      OR asked.sender = 'lead' OR asked.status <> 'pending' OR asked.required_approvals <> 1
      OR asked.expires_at <= now();
    -- The fence (a request's incarnation, work version and task never change) and an agent that
    -- is neither stopping nor ended, whose effects the full path would skip or keep.
    CONTINUE WHEN agent.incarnation <> asked.incarnation
      OR agent.work_version IS DISTINCT FROM asked.work_version
      OR agent.task_id IS DISTINCT FROM asked.task_id
      OR agent.status IN ('stopping', 'shutdown', 'crashed');

    UPDATE requests
    SET status = decision.status, feedback = decision.feedback,
        responded_by = decision."respondedBy", decided_by = decision."decidedBy",
        responded_at = decision.at
    WHERE id = decision."requestId"
    RETURNING * INTO decided;

    UPDATE agents
    SET gate = coalesce(decision.gate, gate),
        status = CASE
          WHEN decision."isWaitingWhileOthersPend" AND EXISTS (
            SELECT 1 FROM requests
            WHERE requests.agent_id = agent.id AND requests.incarnation = agent.incarnation
              AND requests.status = 'pending' AND requests.target = 'lead'
              AND requests.id <> decision."requestId"
          ) THEN 'waiting_approval'::agent_status
          ELSE 'working'::agent_status
        END,
        updated_at = decision.at
    WHERE id = agent.id
    RETURNING * INTO agent;

    INSERT INTO messages (sender, recipient, agent_id, incarnation, type, content, metadata)
    VALUES (decided.target, decided.sender, decided.agent_id, decided.incarnation,
      decision."responseType", coalesce(decision.feedback, ''),
      jsonb_build_object('requestId', decided.id, 'approve', decision.approve,
        'status', decided.status))
    RETURNING id INTO sent_id;

    -- One insert, in the order the full path appends them (lib/transaction.ts).
    INSERT INTO events (kind, subject, data) VALUES
      ('agent.updated', 'agent:' || agent.name, jsonb_build_object(
        'agent', agent.name, 'incarnation', agent.incarnation, 'status', agent.status,
        'gate', agent.gate, 'workVersion', agent.work_version, 'taskId', agent.task_id,
        'toolHost', agent.tool_host)),
      ('message.sent', 'inbox:' || decided.sender, jsonb_build_object(
        'messageId', sent_id, 'from', decided.target, 'to', decided.sender,
        'type', decision."responseType", 'requestId', decided.id)),
      ('request.decided', 'request:' || decided.id, jsonb_build_object(
        'requestId', decided.id, 'type', decided.type, 'agent', agent.name,
        'status', decided.status, 'respondedBy', decided.responded_by,
        'decidedBy', decided.decided_by));

    decision_position := decision."position";
    SELECT sent.message_id, sent.message_at, sent.previous_message_id
    INTO message_id, message_at, previous_message_id
    FROM decision_message(agent.id, agent.incarnation) AS sent;
    RETURN NEXT;
  END LOOP;
END;
$$ LANGUAGE plpgsql;

-- `decide_common_request` (migration 018) stays: a node of the previous version calls it until
-- it is replaced, as the bench's baseline of an earlier commit does against this schema.

-- Down Migration

DROP FUNCTION decide_common_requests(jsonb);
