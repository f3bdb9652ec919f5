-- Up Migration

-- A Lead can disable a person (PATCH /api/v1/users/{id}); a disabled user cannot sign in, their
-- sessions are deleted and their API tokens stop working. Rows stay for the audit trail.
ALTER TABLE users ADD COLUMN disabled_at timestamptz(3);

-- Sign-in attempts hold their slot from before the password is checked until it is known to be
-- right (then the row is deleted), so a row here is a failure or an attempt in flight. Attempts
-- from a browser that signed in to the account before carry its device id and are counted apart
-- from strangers' (docs/decisions/012-csp-and-device-cookies.md).
ALTER TABLE sign_in_failures ADD COLUMN device_id text;
CREATE INDEX sign_in_failures_email_device_id_created_at_idx
  ON sign_in_failures (email, device_id, created_at);

-- Down Migration

DROP INDEX sign_in_failures_email_device_id_created_at_idx;
ALTER TABLE sign_in_failures DROP COLUMN device_id;
ALTER TABLE users DROP COLUMN disabled_at;
