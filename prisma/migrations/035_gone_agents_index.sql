-- Up Migration

-- The team board shows every agent that is present and the 500 that went last of those that are
-- gone: ended, or offline for over an hour with nothing pending (decision 091). Agents are never
-- pruned (their requests are the audit trail), so the gone ones are read by this index from the
-- newest, not by sorting all of them on every refetch of the board.
CREATE INDEX agents_gone_idx ON agents (updated_at DESC, id DESC)
  WHERE status IN ('shutdown', 'crashed', 'offline');

-- Down Migration

DROP INDEX agents_gone_idx;
