-- Up Migration

-- Messages belong to the incarnation they were sent to (docs/decisions/011). Existing rows go to
-- the recipient's current incarnation; the Lead's inbox has none.
ALTER TABLE messages ADD COLUMN incarnation integer;
ALTER TABLE messages ADD COLUMN cancelled_at timestamptz(3);
UPDATE messages m SET incarnation = a.incarnation FROM agents a WHERE m.agent_id = a.id;
ALTER TABLE messages ADD CONSTRAINT messages_agent_has_incarnation
  CHECK ((agent_id IS NULL) = (incarnation IS NULL));
CREATE INDEX messages_agent_id_id_idx ON messages (agent_id, id);

-- An approved stop must end by this time, or the sweeper forces it.
ALTER TABLE agents ADD COLUMN stop_deadline_at timestamptz(3);

-- Idempotency keys are scoped to the incarnation: a new `alice` reusing a key gets a new request.
DROP INDEX requests_agent_id_idempotency_key_key;
CREATE UNIQUE INDEX requests_agent_id_incarnation_idempotency_key_key
  ON requests (agent_id, incarnation, idempotency_key);

-- A decision after the deadline is refused by the database's own clock, whatever the caller's
-- clock says and whether or not the sweeper has run; expiry, supersession and cancellation stay
-- possible. SQLSTATE P0002 is reserved for this refusal (lib/requests/mutations.ts).
CREATE FUNCTION requests_refuse_late_decision() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'request % passed its deadline', OLD.id USING ERRCODE = 'P0002';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER requests_decision_before_deadline
  BEFORE UPDATE ON requests
  FOR EACH ROW WHEN (
    OLD.status = 'pending' AND NEW.status IN ('approved', 'rejected') AND OLD.expires_at <= now()
  )
  EXECUTE FUNCTION requests_refuse_late_decision();

-- The audit trail is append-only against the application: events never change or disappear, and
-- a decided request is never deleted. Only the retention job (`npm run prune`) sets
-- handshake.prune for its own transaction. This guards against the application's bugs, not
-- against the database owner, who can disable triggers (docs/decisions/011).
CREATE FUNCTION refuse_audit_change() RETURNS trigger AS $$
BEGIN
  IF current_setting('handshake.prune', true) = 'on' AND TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION '% of % % is refused: the audit trail is append-only', TG_OP, TG_TABLE_NAME,
    OLD.id USING ERRCODE = 'check_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER events_append_only
  BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION refuse_audit_change();
CREATE TRIGGER requests_decided_are_kept
  BEFORE DELETE ON requests
  FOR EACH ROW WHEN (OLD.status <> 'pending')
  EXECUTE FUNCTION refuse_audit_change();

-- Down Migration

DROP TRIGGER requests_decided_are_kept ON requests;
DROP TRIGGER events_append_only ON events;
DROP FUNCTION refuse_audit_change;
DROP TRIGGER requests_decision_before_deadline ON requests;
DROP FUNCTION requests_refuse_late_decision;
DROP INDEX requests_agent_id_incarnation_idempotency_key_key;
CREATE UNIQUE INDEX requests_agent_id_idempotency_key_key ON requests (agent_id, idempotency_key);
ALTER TABLE agents DROP COLUMN stop_deadline_at;
DROP INDEX messages_agent_id_id_idx;
ALTER TABLE messages DROP CONSTRAINT messages_agent_has_incarnation;
ALTER TABLE messages DROP COLUMN cancelled_at;
ALTER TABLE messages DROP COLUMN incarnation;
