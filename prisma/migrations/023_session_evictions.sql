-- Up Migration

-- Web nodes cache session cookie → caller as they cache bearer tokens (decision 044). Whatever ends
-- a session or changes it (sign-out, a user disabled, a sweep of expired rows, better-auth moving
-- its expiry) tells every node to forget the callers it resolved through that session.
CREATE OR REPLACE FUNCTION actor_evictions_notify() RETURNS trigger AS $$
DECLARE
  changed record;
BEGIN
  IF TG_OP = 'DELETE' THEN changed := OLD; ELSE changed := NEW; END IF;
  PERFORM pg_notify(
    'handshake_actor_evictions',
    CASE TG_TABLE_NAME
      WHEN 'agents' THEN 'agent:'
      WHEN 'api_tokens' THEN 'token:'
      WHEN 'sessions' THEN 'session:'
      ELSE 'user:'
    END || changed.id::text
  );
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER sessions_evict_actor
  AFTER UPDATE OR DELETE ON sessions FOR EACH ROW EXECUTE FUNCTION actor_evictions_notify();

-- Down Migration

DROP TRIGGER sessions_evict_actor ON sessions;
CREATE OR REPLACE FUNCTION actor_evictions_notify() RETURNS trigger AS $$
DECLARE
  changed record;
BEGIN
  IF TG_OP = 'DELETE' THEN changed := OLD; ELSE changed := NEW; END IF;
  PERFORM pg_notify(
    'handshake_actor_evictions',
    CASE TG_TABLE_NAME
      WHEN 'agents' THEN 'agent:'
      WHEN 'api_tokens' THEN 'token:'
      ELSE 'user:'
    END || changed.id::text
  );
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
