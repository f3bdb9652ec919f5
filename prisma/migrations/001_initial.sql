-- Up Migration

CREATE TYPE user_role AS ENUM ('lead', 'viewer');
CREATE TYPE agent_status AS ENUM ('starting', 'working', 'idle', 'waiting_approval', 'stopping', 'shutdown', 'offline', 'crashed');
CREATE TYPE gate_state AS ENUM ('not_required', 'required', 'pending', 'approved', 'rejected');
CREATE TYPE request_status AS ENUM ('pending', 'approved', 'rejected', 'expired', 'superseded', 'cancelled');
CREATE TYPE task_status AS ENUM ('open', 'claimed', 'done');

CREATE TABLE users (
  id             text PRIMARY KEY,
  name           text NOT NULL,
  email          text NOT NULL,
  email_verified boolean NOT NULL DEFAULT false,
  image          text,
  role           user_role NOT NULL DEFAULT 'viewer',
  created_at     timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at     timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX users_email_key ON users (email);

CREATE TABLE sessions (
  id         text PRIMARY KEY,
  token      text NOT NULL,
  user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  expires_at timestamptz(3) NOT NULL,
  ip_address text,
  user_agent text,
  created_at timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX sessions_token_key ON sessions (token);
CREATE INDEX sessions_user_id_idx ON sessions (user_id);

CREATE TABLE accounts (
  id                       text PRIMARY KEY,
  account_id               text NOT NULL,
  provider_id              text NOT NULL,
  user_id                  text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  access_token             text,
  refresh_token            text,
  id_token                 text,
  access_token_expires_at  timestamptz(3),
  refresh_token_expires_at timestamptz(3),
  scope                    text,
  password                 text,
  created_at               timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at               timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX accounts_user_id_idx ON accounts (user_id);

CREATE TABLE verifications (
  id         text PRIMARY KEY,
  identifier text NOT NULL,
  value      text NOT NULL,
  expires_at timestamptz(3) NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX verifications_identifier_idx ON verifications (identifier);

CREATE TABLE api_tokens (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name         text NOT NULL,
  token_hash   text NOT NULL,
  created_at   timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  last_used_at timestamptz(3),
  revoked_at   timestamptz(3)
);
CREATE UNIQUE INDEX api_tokens_token_hash_key ON api_tokens (token_hash);
CREATE INDEX api_tokens_user_id_idx ON api_tokens (user_id);

CREATE TABLE tasks (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  title        text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  description  text,
  status       task_status NOT NULL DEFAULT 'open',
  assignee_id  uuid,
  created_at   timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at   timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  completed_at timestamptz(3),
  CONSTRAINT tasks_claimed_has_assignee CHECK (status <> 'claimed' OR assignee_id IS NOT NULL)
);
CREATE INDEX tasks_status_idx ON tasks (status);

CREATE TABLE agents (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name              text NOT NULL,
  role              text NOT NULL,
  prompt            text,
  status            agent_status NOT NULL DEFAULT 'starting',
  gate              gate_state NOT NULL DEFAULT 'not_required',
  require_plan      boolean NOT NULL DEFAULT false,
  work_version      integer NOT NULL DEFAULT 0,
  task_id           uuid REFERENCES tasks (id) ON DELETE SET NULL,
  incarnation       integer NOT NULL DEFAULT 1,
  token_hash        text NOT NULL,
  worker            jsonb,
  is_forced_stop    boolean NOT NULL DEFAULT false,
  inbox_acked_id    bigint NOT NULL DEFAULT 0,
  last_heartbeat_at timestamptz(3),
  created_at        timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at        timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  -- Names are stored lower-case, so plain uniqueness is case-insensitive uniqueness; `lead` and
  -- `agent` are addresses in the protocol, never agent names.
  CONSTRAINT agents_name_format CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,39}$' AND name NOT IN ('lead', 'agent')),
  CONSTRAINT agents_incarnation_positive CHECK (incarnation >= 1),
  CONSTRAINT agents_work_version_nonnegative CHECK (work_version >= 0)
);
CREATE UNIQUE INDEX agents_name_key ON agents (name);
CREATE UNIQUE INDEX agents_token_hash_key ON agents (token_hash);
CREATE INDEX agents_status_idx ON agents (status);

ALTER TABLE tasks ADD CONSTRAINT tasks_assignee_id_fkey
  FOREIGN KEY (assignee_id) REFERENCES agents (id) ON DELETE SET NULL;

CREATE TABLE requests (
  id              text PRIMARY KEY,
  type            text NOT NULL,
  agent_id        uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  sender          text NOT NULL,
  target          text NOT NULL,
  status          request_status NOT NULL DEFAULT 'pending',
  payload         jsonb NOT NULL,
  feedback        text,
  responded_by    text,
  responded_at    timestamptz(3),
  incarnation     integer NOT NULL,
  work_version    integer,
  task_id         uuid,
  idempotency_key text,
  created_at      timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  expires_at      timestamptz(3) NOT NULL,
  CONSTRAINT requests_id_format CHECK (id ~ '^req_[0-9a-f]{32}$'),
  -- A request is decided exactly when it leaves `pending`, and then carries when it was decided.
  CONSTRAINT requests_decided_has_time CHECK ((status = 'pending') = (responded_at IS NULL))
);
CREATE UNIQUE INDEX requests_agent_id_idempotency_key_key ON requests (agent_id, idempotency_key);
-- The invariant "at most one pending request per (agent, type)", held by the database itself.
CREATE UNIQUE INDEX requests_one_pending_per_agent_type ON requests (agent_id, type) WHERE status = 'pending';
CREATE INDEX requests_status_expires_at_idx ON requests (status, expires_at);
CREATE INDEX requests_status_created_at_id_idx ON requests (status, created_at DESC, id DESC);
CREATE INDEX requests_agent_id_created_at_idx ON requests (agent_id, created_at DESC);

-- Terminal states never change again: refuse any update to a decided request, whoever issues it.
CREATE FUNCTION requests_refuse_terminal_update() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'request % is % and can no longer change', OLD.id, OLD.status
    USING ERRCODE = 'check_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER requests_terminal_is_final
  BEFORE UPDATE ON requests
  FOR EACH ROW WHEN (OLD.status <> 'pending')
  EXECUTE FUNCTION requests_refuse_terminal_update();

CREATE TABLE messages (
  id         bigserial PRIMARY KEY,
  sender     text NOT NULL,
  recipient  text NOT NULL,
  agent_id   uuid REFERENCES agents (id) ON DELETE CASCADE,
  type       text NOT NULL,
  content    text NOT NULL,
  metadata   jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX messages_recipient_id_idx ON messages (recipient, id);

CREATE TABLE tool_calls (
  id          bigserial PRIMARY KEY,
  agent_id    uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  incarnation integer NOT NULL,
  tool        text NOT NULL,
  args        jsonb NOT NULL,
  gate        gate_state NOT NULL,
  is_allowed  boolean NOT NULL,
  code        text,
  reason      text,
  request_id  text,
  created_at  timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX tool_calls_agent_id_id_idx ON tool_calls (agent_id, id);

CREATE TABLE events (
  id         bigserial PRIMARY KEY,
  kind       text NOT NULL,
  subject    text NOT NULL,
  data       jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX events_subject_id_idx ON events (subject, id);

-- Only the id travels over NOTIFY (payloads are capped at 8 kB); listeners read the row. A trigger
-- rather than application code so no writer can forget it.
CREATE FUNCTION events_notify() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('handshake_events', NEW.id::text);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER events_notify_insert
  AFTER INSERT ON events
  FOR EACH ROW EXECUTE FUNCTION events_notify();

-- Down Migration

DROP TABLE events, tool_calls, messages, requests CASCADE;
DROP FUNCTION events_notify, requests_refuse_terminal_update;
ALTER TABLE tasks DROP CONSTRAINT tasks_assignee_id_fkey;
DROP TABLE agents, tasks, api_tokens, verifications, accounts, sessions, users CASCADE;
DROP TYPE task_status, request_status, gate_state, agent_status, user_role;
