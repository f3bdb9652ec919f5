-- Up Migration

-- Every web node caches bearer token → caller (lib/auth/actor-cache.ts, decision 027). Whatever
-- changes who a token acts as, or whether it still works, tells every node to forget it, from the
-- database itself, so a path that writes these rows through raw SQL or a new code path still evicts.
-- The payload names what changed (`agent:<id>`, `token:<id>`, `user:<id>`); nodes evict every cached
-- caller tagged with it. The WHEN clauses keep the busy agents table (heartbeats, status, gate)
-- from notifying on every write.
CREATE FUNCTION actor_evictions_notify() RETURNS trigger AS $$
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

CREATE TRIGGER agents_evict_actor_update
  AFTER UPDATE OF token_hash, incarnation, name ON agents
  FOR EACH ROW
  WHEN (OLD.token_hash IS DISTINCT FROM NEW.token_hash
     OR OLD.incarnation IS DISTINCT FROM NEW.incarnation
     OR OLD.name IS DISTINCT FROM NEW.name)
  EXECUTE FUNCTION actor_evictions_notify();
CREATE TRIGGER agents_evict_actor_delete
  AFTER DELETE ON agents FOR EACH ROW EXECUTE FUNCTION actor_evictions_notify();

CREATE TRIGGER api_tokens_evict_actor_update
  AFTER UPDATE ON api_tokens
  FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
     OR OLD.scope IS DISTINCT FROM NEW.scope
     OR OLD.token_hash IS DISTINCT FROM NEW.token_hash
     OR OLD.user_id IS DISTINCT FROM NEW.user_id
     OR OLD.name IS DISTINCT FROM NEW.name)
  EXECUTE FUNCTION actor_evictions_notify();
CREATE TRIGGER api_tokens_evict_actor_delete
  AFTER DELETE ON api_tokens FOR EACH ROW EXECUTE FUNCTION actor_evictions_notify();

CREATE TRIGGER users_evict_actor_update
  AFTER UPDATE ON users
  FOR EACH ROW
  WHEN (OLD.role IS DISTINCT FROM NEW.role
     OR OLD.disabled_at IS DISTINCT FROM NEW.disabled_at
     OR OLD.email IS DISTINCT FROM NEW.email
     OR OLD.name IS DISTINCT FROM NEW.name)
  EXECUTE FUNCTION actor_evictions_notify();
CREATE TRIGGER users_evict_actor_delete
  AFTER DELETE ON users FOR EACH ROW EXECUTE FUNCTION actor_evictions_notify();

-- Down Migration

DROP TRIGGER users_evict_actor_delete ON users;
DROP TRIGGER users_evict_actor_update ON users;
DROP TRIGGER api_tokens_evict_actor_delete ON api_tokens;
DROP TRIGGER api_tokens_evict_actor_update ON api_tokens;
DROP TRIGGER agents_evict_actor_delete ON agents;
DROP TRIGGER agents_evict_actor_update ON agents;
DROP FUNCTION actor_evictions_notify;
