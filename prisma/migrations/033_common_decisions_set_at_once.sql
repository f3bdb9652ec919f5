-- Up Migration

-- The common decisions of a group in a statement or two, not a loop of eight per decision
-- (decision 088): one takes the locks, every agent and then every request, and one, with a
-- snapshot taken once they are held, checks the fences and writes what migration 032's loop
-- wrote, decision by decision in the group's order. PostgreSQL prepares each of a statement's
-- tables for writing (its checks, its triggers' WHEN clauses, its indexes' predicates) and fires
-- the events' notifying trigger once per statement: for a group of three decisions, once instead
-- of three times. An agent's row is written once per statement, so the second decision of one
-- agent in a group is made by the same statement again, as a second pass, whose snapshot sees the
-- first's writes; its rows come after those of the first pass's other agents.
CREATE OR REPLACE FUNCTION decide_common_requests(p_decisions jsonb)
RETURNS TABLE (
  decision_position integer,
  decided requests,
  message_id bigint,
  message_at text,
  previous_message_id bigint
) AS $$
DECLARE
  locked_positions integer[];
  -- Each locked decision's pass: its rank among its agent's decisions, by position.
  locked_passes integer[];
  pass_count integer;
BEGIN
  -- Every decision on an agent's requests takes the agent's lock first (lib/agents/data.ts
  -- lockAgent), then the request's. A request's agent never changes, so it is read before the
  -- locks. SKIP LOCKED: a row another transaction holds is left, and its decision takes the full
  -- path, which waits for it.
  WITH decision AS (
    SELECT * FROM jsonb_to_recordset(p_decisions) AS d("position" integer, "requestId" text)
  ), asked AS (
    SELECT id, agent_id FROM requests WHERE id = ANY (ARRAY(SELECT "requestId" FROM decision))
  ), locked_agent AS (
    SELECT id FROM agents WHERE id = ANY (ARRAY(SELECT agent_id FROM asked))
    ORDER BY id
    FOR NO KEY UPDATE SKIP LOCKED
  ), locked_request AS (
    SELECT id, agent_id FROM requests
    WHERE id = ANY (ARRAY(
      SELECT asked.id FROM asked JOIN locked_agent ON locked_agent.id = asked.agent_id))
    ORDER BY id
    FOR NO KEY UPDATE SKIP LOCKED
  )
  SELECT array_agg(ranked."position" ORDER BY ranked."position"),
    array_agg(ranked.pass ORDER BY ranked."position"), coalesce(max(ranked.pass), 0)
  INTO locked_positions, locked_passes, pass_count
  FROM (
    SELECT decision."position", row_number() OVER (
      PARTITION BY locked_request.agent_id ORDER BY decision."position") AS pass
    FROM decision JOIN locked_request ON locked_request.id = decision."requestId"
  ) ranked;

  FOR current_pass IN 1 .. pass_count LOOP
    -- A statement of its own, so its snapshot is taken under the locks, and after the passes
    -- before it: it reads the newest rows, which nothing else can change before the group
    -- commits.
    RETURN QUERY
    WITH decision AS (
      SELECT d.* FROM jsonb_to_recordset(p_decisions) AS d(
        "position" integer, "requestId" text, type text, status request_status, approve boolean,
        feedback text, "respondedBy" text, "decidedBy" jsonb, at timestamptz,
        "responseType" text,
        -- The gate after the decision; null leaves it alone.
        gate gate_state,
        -- The status each type of request waits in, by type: what the agent is left in while
        -- another request of its incarnation still waits on the Lead.
        "waitingStatuses" jsonb)
      JOIN unnest(locked_positions, locked_passes) AS locked("position", pass)
        ON locked."position" = d."position"
      WHERE locked.pass = current_pass
    ), checked AS MATERIALIZED (
      SELECT decision.*, agent.id AS agent_id,
        waiting.type AS waiting_type
      FROM decision
      JOIN requests asked ON asked.id = decision."requestId"
      JOIN agents agent ON agent.id = asked.agent_id
      -- The newest other request of the incarnation still waiting on the Lead leaves the agent
      -- waiting as its type says (decision 061, migration 032).
      LEFT JOIN LATERAL (
        SELECT other.type FROM requests other
        WHERE other.agent_id = agent.id AND other.incarnation = agent.incarnation
          AND other.status = 'pending' AND other.target = 'lead'
          AND other.id <> decision."requestId"
        ORDER BY other.created_at DESC, other.id DESC
        LIMIT 1
      ) waiting ON true
      -- A late decision is left to the full path, which expires the request (REQUEST_EXPIRED).
      -- Judged on the locked row, nothing checked here can change before the group commits: the
      -- two-Lead check (migration 012) and the late-decision trigger (migration 006) cannot raise.
      WHERE asked.type = decision.type AND asked.target = 'lead' AND asked.sender <> 'lead'
        AND asked.status = 'pending' AND asked.required_approvals = 1
        AND asked.expires_at > now()
        -- The fence (a request's incarnation, work version and task never change) and an agent
        -- that is neither stopping nor ended, whose effects the full path would skip or keep.
        AND agent.incarnation = asked.incarnation
        AND agent.work_version IS NOT DISTINCT FROM asked.work_version
        AND agent.task_id IS NOT DISTINCT FROM asked.task_id
        AND agent.status NOT IN ('stopping', 'shutdown', 'crashed')
        -- A waiting request of a type the caller did not describe is left to the full path.
        AND (waiting.type IS NULL OR decision."waitingStatuses" ->> waiting.type IS NOT NULL)
    ), decided_request AS (
      UPDATE requests
      SET status = checked.status, feedback = checked.feedback,
          responded_by = checked."respondedBy", decided_by = checked."decidedBy",
          responded_at = checked.at
      FROM checked
      WHERE requests.id = checked."requestId"
      RETURNING requests AS row, checked."position", checked.approve, checked."responseType"
    ), updated_agent AS (
      UPDATE agents
      SET gate = coalesce(checked.gate, agents.gate),
          status = coalesce((checked."waitingStatuses" ->> checked.waiting_type)::agent_status,
                            'working'),
          updated_at = checked.at
      FROM checked
      WHERE agents.id = checked.agent_id
      RETURNING agents AS row
    ), sent AS (
      INSERT INTO messages (sender, recipient, agent_id, incarnation, type, content, metadata)
      SELECT (row).target, (row).sender, (row).agent_id, (row).incarnation, "responseType",
        coalesce((row).feedback, ''),
        jsonb_build_object('requestId', (row).id, 'approve', approve, 'status', (row).status)
      FROM decided_request
      ORDER BY "position"
      RETURNING id, created_at, agent_id, incarnation
    ), written AS MATERIALIZED (
      -- Each decision's message is its agent's newest: its id and time, and the live message
      -- before it, are what a long-poll woken here needs to answer with it unread (decisions 040
      -- and 052). Every message to an agent is written under its lock, so the one before is final.
      SELECT decided_request."position", decided_request.row AS request,
        decided_request."responseType", updated_agent.row AS agent, sent.id AS sent_id,
        sent.created_at AS sent_at,
        (SELECT live.id FROM messages live
         WHERE live.agent_id = sent.agent_id AND live.incarnation = sent.incarnation
           AND live.cancelled_at IS NULL AND live.id < sent.id
         ORDER BY live.id DESC
         LIMIT 1) AS previous_id
      FROM decided_request
      JOIN updated_agent ON (updated_agent.row).id = (decided_request.row).agent_id
      JOIN sent ON sent.agent_id = (decided_request.row).agent_id
    ), appended AS (
      -- One insert, in the order the full path appends them (lib/transaction.ts), decision by
      -- decision.
      INSERT INTO events (kind, subject, data)
      SELECT kind, subject, data FROM (
        SELECT "position", 1 AS step, 'agent.updated' AS kind, 'agent:' || (agent).name AS subject,
          jsonb_build_object(
            'agent', (agent).name, 'incarnation', (agent).incarnation, 'status', (agent).status,
            'gate', (agent).gate, 'workVersion', (agent).work_version, 'taskId', (agent).task_id,
            'toolHost', (agent).tool_host) AS data
        FROM written
        UNION ALL
        SELECT "position", 2, 'message.sent', 'inbox:' || (request).sender, jsonb_build_object(
          'messageId', sent_id, 'from', (request).target, 'to', (request).sender,
          'type', "responseType", 'requestId', (request).id)
        FROM written
        UNION ALL
        SELECT "position", 3, 'request.decided', 'request:' || (request).id, jsonb_build_object(
          'requestId', (request).id, 'type', (request).type, 'agent', (agent).name,
          'status', (request).status, 'respondedBy', (request).responded_by,
          'decidedBy', (request).decided_by)
        FROM written
      ) event
      ORDER BY "position", step
    )
    SELECT written."position", written.request, written.sent_id,
      to_char(written.sent_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      written.previous_id
    FROM written
    ORDER BY written."position";
  END LOOP;
END;
$$ LANGUAGE plpgsql;

-- The statement above reads the message before the decision's itself.
DROP FUNCTION decision_message(uuid, integer);

-- Down Migration

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
