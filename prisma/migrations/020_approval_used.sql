-- Up Migration

-- Whether a tool approval has been used, stored on the approval (decision 039). An approval is
-- good for one run: it is used once a call that names it is allowed, or voided once a retry finds
-- its file changed (FILE_CHANGED, decision 025). That was asked of tool_calls each time: once per
-- earlier approval on every retry of an approved call, and by the rule-allowed verdict's check for
-- an approval the Lead gave that is waiting to be used, whose plan could hash the whole table.
ALTER TABLE requests ADD COLUMN approval_used boolean NOT NULL DEFAULT false;

-- A decided request never changes (migration 001), but for this mark: once, from unused to used,
-- and nothing else with it. The decision stays as it was; an approval cannot be made usable again.
CREATE OR REPLACE FUNCTION requests_refuse_terminal_update() RETURNS trigger AS $$
BEGIN
  IF NOT OLD.approval_used AND NEW.approval_used
     AND to_jsonb(NEW) - 'approval_used' = to_jsonb(OLD) - 'approval_used' THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'request % is % and can no longer change', OLD.id, OLD.status
    USING ERRCODE = 'check_violation';
END;
$$ LANGUAGE plpgsql;

-- Approvals already used, by the calls that used them.
UPDATE requests approval SET approval_used = true
WHERE approval.type = 'tool_approval'
  AND EXISTS (
    SELECT 1 FROM tool_calls used
    WHERE used.request_id = approval.id AND (used.is_allowed OR used.code = 'FILE_CHANGED')
  );

-- The one place the rule is written: every path that records a call (the full transaction and
-- the one-statement verdicts) inserts a tool_calls row, and the row marks what it used.
CREATE FUNCTION mark_approval_used() RETURNS trigger AS $$
BEGIN
  UPDATE requests SET approval_used = true WHERE id = NEW.request_id AND NOT approval_used;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER tool_calls_mark_approval_used
  AFTER INSERT ON tool_calls
  FOR EACH ROW
  WHEN (NEW.request_id IS NOT NULL AND (NEW.is_allowed OR NEW.code = 'FILE_CHANGED'))
  EXECUTE FUNCTION mark_approval_used();

-- The approvals waiting to be used: few per agent at any time, whatever the history holds. A
-- rule's approval is written used (its call is recorded with it), so it never enters this index.
CREATE INDEX requests_unused_tool_approvals_idx ON requests (agent_id)
  WHERE type = 'tool_approval' AND status = 'approved' AND NOT approval_used;

-- Both served the questions the column now answers (migration 019).
DROP INDEX requests_lead_tool_approvals_idx;
DROP INDEX tool_calls_request_id_idx;

-- Down Migration

CREATE INDEX tool_calls_request_id_idx ON tool_calls (request_id) WHERE request_id IS NOT NULL;
CREATE INDEX requests_lead_tool_approvals_idx ON requests (agent_id)
  WHERE type = 'tool_approval' AND status = 'approved' AND decided_by ->> 'kind' <> 'rule';
DROP INDEX requests_unused_tool_approvals_idx;
DROP TRIGGER tool_calls_mark_approval_used ON tool_calls;
DROP FUNCTION mark_approval_used();
CREATE OR REPLACE FUNCTION requests_refuse_terminal_update() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'request % is % and can no longer change', OLD.id, OLD.status
    USING ERRCODE = 'check_violation';
END;
$$ LANGUAGE plpgsql;
ALTER TABLE requests DROP COLUMN approval_used;
