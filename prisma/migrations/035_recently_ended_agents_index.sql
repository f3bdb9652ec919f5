-- Up Migration

-- The team board shows every agent not ended and the 500 that ended last (decision 091); ended
-- agents are never pruned (their requests are the audit trail), so they are read by this index
-- from the newest, not by sorting all of them on every refetch of the board.
CREATE INDEX agents_recently_ended_idx ON agents (updated_at DESC, id DESC)
  WHERE status IN ('shutdown', 'crashed');

-- Down Migration

DROP INDEX agents_recently_ended_idx;
