-- Up Migration

-- Protocol types declare their own outcomes and waiting status (lib/protocol/definition.ts); the
-- database's closed lists hold every value the registry uses (tests/db/protocol-registry.test.ts).
-- A question ends `answered` or `unanswered`; its agent waits as `waiting_answer`.
ALTER TYPE agent_status ADD VALUE IF NOT EXISTS 'waiting_answer' AFTER 'waiting_approval';
ALTER TYPE request_status ADD VALUE IF NOT EXISTS 'answered' AFTER 'expired';
ALTER TYPE request_status ADD VALUE IF NOT EXISTS 'unanswered' AFTER 'answered';

-- What a decision carries for its type, e.g. a question's `{answer}`; null when nothing.
ALTER TABLE requests ADD COLUMN response jsonb;

-- New enum values cannot be named as literals in the transaction that adds them, hence `::text`.
-- Every decision (by a person, a token, an agent or a timeout) records who made it; the two new
-- outcomes are decisions too. NOT VALID for the reason migration 004 gives.
ALTER TABLE requests DROP CONSTRAINT requests_decision_has_decided_by;
ALTER TABLE requests ADD CONSTRAINT requests_decision_has_decided_by CHECK (
  (status::text IN ('approved', 'rejected', 'expired', 'answered', 'unanswered')) = (decided_by IS NOT NULL)
  AND (decided_by IS NULL OR decided_by->>'kind' IN ('human', 'token', 'timeout', 'agent'))
) NOT VALID;

-- A decision after the deadline is refused by the database's clock (migration 006). A timeout may
-- now end a request in a decision's status (a question answered with its default), so the refusal
-- looks at who decided, not only at the status.
DROP TRIGGER requests_decision_before_deadline ON requests;
CREATE TRIGGER requests_decision_before_deadline
  BEFORE UPDATE ON requests
  FOR EACH ROW WHEN (
    OLD.status = 'pending'
    AND NEW.status::text IN ('approved', 'rejected', 'answered', 'unanswered')
    AND NEW.decided_by->>'kind' IS DISTINCT FROM 'timeout'
    AND OLD.expires_at <= now()
  )
  EXECUTE FUNCTION requests_refuse_late_decision();

-- Down Migration

-- PostgreSQL cannot drop an enum value, and answered questions are part of the append-only audit
-- trail: the values stay (nothing writes them once the code is gone); agents waiting on an answer
-- go back to the one waiting status the old code knows.
DROP TRIGGER requests_decision_before_deadline ON requests;
CREATE TRIGGER requests_decision_before_deadline
  BEFORE UPDATE ON requests
  FOR EACH ROW WHEN (
    OLD.status = 'pending' AND NEW.status IN ('approved', 'rejected') AND OLD.expires_at <= now()
  )
  EXECUTE FUNCTION requests_refuse_late_decision();
ALTER TABLE requests DROP CONSTRAINT requests_decision_has_decided_by;
ALTER TABLE requests ADD CONSTRAINT requests_decision_has_decided_by CHECK (
  (status IN ('approved', 'rejected', 'expired')) = (decided_by IS NOT NULL)
  AND (decided_by IS NULL OR decided_by->>'kind' IN ('human', 'token', 'timeout', 'agent'))
) NOT VALID;
ALTER TABLE requests DROP COLUMN response;
UPDATE agents SET status = 'waiting_approval' WHERE status = 'waiting_answer';
