-- Up Migration

-- The two-person rule (docs/decisions/023): a request may need the approvals of two different
-- Leads. One is the default and the only value before this migration; more than two is not offered.
ALTER TABLE requests ADD COLUMN required_approvals integer NOT NULL DEFAULT 1;
ALTER TABLE requests ADD CONSTRAINT requests_required_approvals_range
  CHECK (required_approvals BETWEEN 1 AND 2);

-- One row per Lead who approved a request that needs two: the first approval waits here while the
-- request stays pending, and the primary key makes the same person (by any session or token) one
-- approval. `decided_by` is that approval's own human/token provenance.
CREATE TABLE request_approvals (
  request_id  text NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
  user_id     text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  decided_by  jsonb NOT NULL,
  created_at  timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (request_id, user_id),
  CONSTRAINT request_approvals_decided_by_person CHECK (decided_by->>'kind' IN ('human', 'token'))
);
CREATE INDEX request_approvals_user_id_idx ON request_approvals (user_id);

-- A partial approval is a decision's first half: past the deadline the database refuses it by its
-- own clock, with the SQLSTATE the late decision uses (migration 006), so both end the same way.
CREATE FUNCTION request_approvals_refuse_late() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM requests WHERE id = NEW.request_id AND expires_at <= now()) THEN
    RAISE EXCEPTION 'request % passed its deadline', NEW.request_id USING ERRCODE = 'P0002';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER request_approvals_before_deadline
  BEFORE INSERT ON request_approvals
  FOR EACH ROW EXECUTE FUNCTION request_approvals_refuse_late();

-- Provenance gains two kinds: a rule that decided (migration 011 of the rules work) and the two
-- Leads of a two-person decision. Listing `rule` here as well keeps this constraint the union
-- whichever order the two changes land in. NOT VALID for the reason migration 004 gives.
ALTER TABLE requests DROP CONSTRAINT requests_decision_has_decided_by;
ALTER TABLE requests ADD CONSTRAINT requests_decision_has_decided_by CHECK (
  (status::text IN ('approved', 'rejected', 'expired', 'answered', 'unanswered')) = (decided_by IS NOT NULL)
  AND (decided_by IS NULL OR decided_by->>'kind' IN ('human', 'token', 'timeout', 'agent', 'rule', 'leads'))
) NOT VALID;

-- Fail closed whatever the application does: a request that needs two Leads is approved only by
-- two Leads (or by its own timeout policy), never by one person's single decision.
ALTER TABLE requests ADD CONSTRAINT requests_two_person_approval CHECK (
  required_approvals = 1
  OR status::text NOT IN ('approved', 'answered')
  OR decided_by->>'kind' IN ('leads', 'timeout')
) NOT VALID;

-- Down Migration

ALTER TABLE requests DROP CONSTRAINT requests_two_person_approval;
ALTER TABLE requests DROP CONSTRAINT requests_decision_has_decided_by;
ALTER TABLE requests ADD CONSTRAINT requests_decision_has_decided_by CHECK (
  (status::text IN ('approved', 'rejected', 'expired', 'answered', 'unanswered')) = (decided_by IS NOT NULL)
  AND (decided_by IS NULL OR decided_by->>'kind' IN ('human', 'token', 'timeout', 'agent'))
) NOT VALID;
DROP TRIGGER request_approvals_before_deadline ON request_approvals;
DROP FUNCTION request_approvals_refuse_late;
DROP TABLE request_approvals;
ALTER TABLE requests DROP CONSTRAINT requests_required_approvals_range;
ALTER TABLE requests DROP COLUMN required_approvals;
