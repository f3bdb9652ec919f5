-- Up Migration

-- Every web node caches the rules the gate reads on each verdict (lib/rules/rule-cache.ts,
-- decision 028). Any write to the table, from any node, script or SQL session, tells every node
-- to forget its copy, on the channel the actor-eviction listener already proves delivery on. One
-- notification per statement: the payload names the whole table, not a row.
CREATE FUNCTION rule_evictions_notify() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('handshake_actor_evictions', 'rules:all');
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER rules_evict_cache
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON rules
  FOR EACH STATEMENT EXECUTE FUNCTION rule_evictions_notify();

-- Down Migration

DROP TRIGGER rules_evict_cache ON rules;
DROP FUNCTION rule_evictions_notify;
