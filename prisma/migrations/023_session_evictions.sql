-- Up Migration

-- Web nodes cache session cookie → caller as they cache bearer tokens (decision 044). Whatever ends
-- a session or changes it (sign-out, a user disabled, a sweep of expired rows, better-auth moving
-- its expiry) tells every node to forget the callers it resolved through that session, on the
-- channel the actor-eviction listener already proves delivery on.
CREATE FUNCTION session_evictions_notify() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('handshake_actor_evictions', 'session:' || OLD.id);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER sessions_evict_actor
  AFTER UPDATE OR DELETE ON sessions FOR EACH ROW EXECUTE FUNCTION session_evictions_notify();

-- Down Migration

DROP TRIGGER sessions_evict_actor ON sessions;
DROP FUNCTION session_evictions_notify;
