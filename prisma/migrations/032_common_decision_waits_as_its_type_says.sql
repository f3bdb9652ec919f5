-- Up Migration

-- A common decision leaves its agent waiting as the newest other request still waiting on the
-- Lead says: a question's `waiting_answer`, not `waiting_approval`; a plan's decision too, which
-- set `working` while a tool call or a question still waited. The caller passes each type's
-- waiting status (the registry's `waitingStatus`). Everything else is migration 029's function.
CREATE OR REPLACE FUNCTION decide_common_requests(p_decisions jsonb)
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
  status_after agent_status;
  other_type text;
BEGIN
  FOR decision IN
    SELECT * FROM jsonb_to_recordset(p_decisions) AS d(
      "position" integer, "requestId" text, type text, status request_status, approve boolean,
      feedback text, "respondedBy" text, "decidedBy" jsonb, at timestamptz,
      "responseType" text,
      -- The gate after the decision; null leaves it alone.
      gate gate_state,
      -- The status each type of request waits in, by type: what the agent is left in while
      -- another request of its incarnation still waits on the Lead.
      "waitingStatuses" jsonb)
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

    -- Asked apart from the update (decision 061): the newest other request of the incarnation
    -- still waiting on the Lead leaves the agent waiting as its type says (a question's
    -- `waiting_answer`); one of a type the caller did not describe is left to the full path.
    SELECT requests.type INTO other_type FROM requests
    WHERE requests.agent_id = agent.id AND requests.incarnation = agent.incarnation
      AND requests.status = 'pending' AND requests.target = 'lead'
      AND requests.id <> decision."requestId"
    ORDER BY requests.created_at DESC, requests.id DESC
    LIMIT 1;
    IF FOUND THEN
      status_after := (decision."waitingStatuses" ->> other_type)::agent_status;
      CONTINUE WHEN status_after IS NULL;
    ELSE
      status_after := 'working';
    END IF;

    UPDATE requests
    SET status = decision.status, feedback = decision.feedback,
        responded_by = decision."respondedBy", decided_by = decision."decidedBy",
        responded_at = decision.at
    WHERE id = decision."requestId"
    RETURNING * INTO decided;

    UPDATE agents
    SET gate = coalesce(decision.gate, gate), status = status_after, updated_at = decision.at
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

-- Down Migration

CREATE OR REPLACE FUNCTION decide_common_requests(p_decisions jsonb)
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
  status_after agent_status;
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

    -- Asked apart from the update, and only when it matters: inside it, the flag let each plan
    -- made with the call's values drop the check, so PostgreSQL judged those plans cheaper than
    -- the one it keeps and planned the update again at every decision (decision 061).
    status_after := 'working';
    IF decision."isWaitingWhileOthersPend" THEN
      IF EXISTS (
        SELECT 1 FROM requests
        WHERE requests.agent_id = agent.id AND requests.incarnation = agent.incarnation
          AND requests.status = 'pending' AND requests.target = 'lead'
          AND requests.id <> decision."requestId"
      ) THEN
        status_after := 'waiting_approval';
      END IF;
    END IF;

    UPDATE agents
    SET gate = coalesce(decision.gate, gate), status = status_after, updated_at = decision.at
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
