-- Up Migration

-- The common decision in one statement (lib/requests/common-decision.ts, decision 031): one Lead
-- approving or rejecting, as asked, a pending plan or tool call that needs one approval. It does
-- what decideRequest's transaction does for that case, in the same order and with the same rows
-- and events, under the same lock. It returns the decided request, or no row with nothing written
-- when anything is unusual: the caller then runs the full path, which decides the case or refuses
-- it with the right error (ALREADY_DECIDED, STALE_INCARNATION, REQUEST_EXPIRED, …).
--
-- PL/pgSQL, not one statement of CTEs: every statement after the agent lock reads a fresh
-- snapshot, so what another transaction committed while this one waited for the lock (a decision
-- of the same request, a new request of the same agent) is seen, as in the full path.
CREATE FUNCTION decide_common_request(
  p_request_id text,
  p_type text,
  p_status request_status,
  p_approve boolean,
  p_feedback text,
  p_responded_by text,
  p_decided_by jsonb,
  p_at timestamptz,
  p_response_type text,
  -- The gate after the decision; null leaves it alone.
  p_gate gate_state,
  -- The agent waits on the Lead while another request of its incarnation does (tool calls).
  p_is_waiting_while_others_pend boolean
) RETURNS SETOF requests AS $$
DECLARE
  asked requests;
  agent agents;
  decided requests;
  message_id bigint;
BEGIN
  SELECT * INTO asked FROM requests WHERE id = p_request_id;
  -- A late decision is left to the full path, which expires the request (REQUEST_EXPIRED).
  IF NOT FOUND OR asked.type <> p_type OR asked.target <> 'lead' OR asked.sender = 'lead'
     OR asked.status <> 'pending' OR asked.required_approvals <> 1 OR asked.expires_at <= now() THEN
    RETURN;
  END IF;

  -- Every decision on an agent's requests takes this lock first (lib/agents/data.ts lockAgent).
  SELECT * INTO agent FROM agents WHERE id = asked.agent_id FOR UPDATE;
  -- The fence (a request's incarnation, work version and task never change) and an agent that
  -- is neither stopping nor ended, whose effects the full path would skip or keep.
  IF agent.incarnation <> asked.incarnation
     OR agent.work_version IS DISTINCT FROM asked.work_version
     OR agent.task_id IS DISTINCT FROM asked.task_id
     OR agent.status IN ('stopping', 'shutdown', 'crashed') THEN
    RETURN;
  END IF;

  -- The compare-and-set: of two deciders exactly one matches. A two-Lead rule raised meanwhile
  -- refuses an approval by the check requests_two_person_approval, as on the full path.
  UPDATE requests
  SET status = p_status, feedback = p_feedback, responded_by = p_responded_by,
      decided_by = p_decided_by, responded_at = p_at
  WHERE id = p_request_id AND status = 'pending'
  RETURNING * INTO decided;
  IF NOT FOUND THEN
    RETURN;
  END IF;

  UPDATE agents
  SET gate = coalesce(p_gate, gate),
      status = CASE
        WHEN p_is_waiting_while_others_pend AND EXISTS (
          SELECT 1 FROM requests
          WHERE requests.agent_id = agent.id AND requests.incarnation = agent.incarnation
            AND requests.status = 'pending' AND requests.target = 'lead'
            AND requests.id <> p_request_id
        ) THEN 'waiting_approval'::agent_status
        ELSE 'working'::agent_status
      END,
      updated_at = p_at
  WHERE id = agent.id
  RETURNING * INTO agent;

  INSERT INTO messages (sender, recipient, agent_id, incarnation, type, content, metadata)
  VALUES (decided.target, decided.sender, decided.agent_id, decided.incarnation, p_response_type,
    coalesce(p_feedback, ''),
    jsonb_build_object('requestId', decided.id, 'approve', p_approve, 'status', decided.status))
  RETURNING id INTO message_id;

  -- One insert, in the order the full path appends them (lib/transaction.ts).
  INSERT INTO events (kind, subject, data) VALUES
    ('agent.updated', 'agent:' || agent.name, jsonb_build_object(
      'agent', agent.name, 'incarnation', agent.incarnation, 'status', agent.status,
      'gate', agent.gate, 'workVersion', agent.work_version, 'taskId', agent.task_id,
      'toolHost', agent.tool_host)),
    ('message.sent', 'inbox:' || decided.sender, jsonb_build_object(
      'messageId', message_id, 'from', decided.target, 'to', decided.sender,
      'type', p_response_type, 'requestId', decided.id)),
    ('request.decided', 'request:' || decided.id, jsonb_build_object(
      'requestId', decided.id, 'type', decided.type, 'agent', agent.name,
      'status', decided.status, 'respondedBy', decided.responded_by,
      'decidedBy', decided.decided_by));

  RETURN NEXT decided;
END;
$$ LANGUAGE plpgsql;

-- Down Migration

DROP FUNCTION decide_common_request;
