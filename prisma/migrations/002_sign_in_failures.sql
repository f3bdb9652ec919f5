-- Up Migration

-- Failed sign-ins, counted per email and per client address to rate-limit guessing. Kept in the
-- database (not in memory) so every web node enforces the same limit.
CREATE TABLE sign_in_failures (
  id         bigserial PRIMARY KEY,
  email      text NOT NULL,
  client_ip  text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX sign_in_failures_email_created_at_idx ON sign_in_failures (email, created_at);
CREATE INDEX sign_in_failures_client_ip_created_at_idx ON sign_in_failures (client_ip, created_at);

-- Down Migration

DROP TABLE sign_in_failures;
