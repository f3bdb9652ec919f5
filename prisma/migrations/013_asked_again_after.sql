-- Up Migration

-- A request identical (normalised) to one the Lead rejected from the same agent: that request's id
-- and feedback, found once at creation (lib/requests/asked-again.ts) so the inbox shows it unasked.
ALTER TABLE requests ADD COLUMN asked_again_after jsonb;

-- The lookup reads an agent's rejected requests of one type, newest first.
CREATE INDEX requests_rejected_by_agent_idx ON requests (agent_id, type, created_at DESC)
  WHERE status = 'rejected';

-- Down Migration

DROP INDEX requests_rejected_by_agent_idx;
ALTER TABLE requests DROP COLUMN asked_again_after;
