-- Up Migration

-- A claim is held by the incarnation that made it (decision 074). Before, an ended or replaced
-- incarnation kept its claim, and nobody could take the task again. Such claims go back to the
-- pool here, each with the `task.updated` event the application writes when it releases one.
WITH released AS (
  UPDATE tasks SET status = 'open', assignee_id = NULL, updated_at = CURRENT_TIMESTAMP
  FROM agents
  WHERE tasks.status = 'claimed'
    AND agents.id = tasks.assignee_id
    AND (agents.task_id IS DISTINCT FROM tasks.id OR agents.status IN ('shutdown', 'crashed'))
  RETURNING tasks.id, agents.name
)
INSERT INTO events (kind, subject, data)
SELECT 'task.updated', 'task:' || id, jsonb_build_object('taskId', id, 'status', 'open', 'agent', name)
FROM released
ORDER BY id;

UPDATE agents SET task_id = NULL WHERE status IN ('shutdown', 'crashed') AND task_id IS NOT NULL;

-- Down Migration

-- Nothing to undo: the released claims belonged to incarnations that no longer act.
SELECT 1;
