-- Up Migration

-- Every creation time is the database's clock as the row is written (decision 083): a web node's
-- clock may be off, and Prisma's own `now()` default is filled in on the node. `clock_timestamp()`,
-- not `now()` (the transaction's start): the events a transaction appends are inserted just
-- before it commits, and the event feed's gap wait reads their age from it; and rows written one
-- after another in one transaction keep their order, as the node's stamps kept it.
ALTER TABLE agents
  ALTER COLUMN created_at SET DEFAULT clock_timestamp(),
  ALTER COLUMN updated_at SET DEFAULT clock_timestamp();
ALTER TABLE api_tokens ALTER COLUMN created_at SET DEFAULT clock_timestamp();
ALTER TABLE events ALTER COLUMN created_at SET DEFAULT clock_timestamp();
ALTER TABLE messages ALTER COLUMN created_at SET DEFAULT clock_timestamp();
ALTER TABLE request_approvals ALTER COLUMN created_at SET DEFAULT clock_timestamp();
ALTER TABLE requests ALTER COLUMN created_at SET DEFAULT clock_timestamp();
ALTER TABLE rules
  ALTER COLUMN created_at SET DEFAULT clock_timestamp(),
  ALTER COLUMN updated_at SET DEFAULT clock_timestamp();
ALTER TABLE sign_in_failures ALTER COLUMN created_at SET DEFAULT clock_timestamp();
ALTER TABLE tasks
  ALTER COLUMN created_at SET DEFAULT clock_timestamp(),
  ALTER COLUMN updated_at SET DEFAULT clock_timestamp();
ALTER TABLE tool_calls ALTER COLUMN created_at SET DEFAULT clock_timestamp();
ALTER TABLE users
  ALTER COLUMN created_at SET DEFAULT clock_timestamp(),
  ALTER COLUMN updated_at SET DEFAULT clock_timestamp();

-- Down Migration

ALTER TABLE agents
  ALTER COLUMN created_at SET DEFAULT CURRENT_TIMESTAMP,
  ALTER COLUMN updated_at SET DEFAULT CURRENT_TIMESTAMP;
ALTER TABLE api_tokens ALTER COLUMN created_at SET DEFAULT CURRENT_TIMESTAMP;
ALTER TABLE events ALTER COLUMN created_at SET DEFAULT CURRENT_TIMESTAMP;
ALTER TABLE messages ALTER COLUMN created_at SET DEFAULT CURRENT_TIMESTAMP;
ALTER TABLE request_approvals ALTER COLUMN created_at SET DEFAULT now();
ALTER TABLE requests ALTER COLUMN created_at SET DEFAULT CURRENT_TIMESTAMP;
ALTER TABLE rules
  ALTER COLUMN created_at SET DEFAULT now(),
  ALTER COLUMN updated_at SET DEFAULT now();
ALTER TABLE sign_in_failures ALTER COLUMN created_at SET DEFAULT CURRENT_TIMESTAMP;
ALTER TABLE tasks
  ALTER COLUMN created_at SET DEFAULT CURRENT_TIMESTAMP,
  ALTER COLUMN updated_at SET DEFAULT CURRENT_TIMESTAMP;
ALTER TABLE tool_calls ALTER COLUMN created_at SET DEFAULT CURRENT_TIMESTAMP;
ALTER TABLE users
  ALTER COLUMN created_at SET DEFAULT CURRENT_TIMESTAMP,
  ALTER COLUMN updated_at SET DEFAULT CURRENT_TIMESTAMP;
