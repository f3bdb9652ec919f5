-- Up Migration

-- Each statement that appends events signs and notifies them in one call of its trigger
-- (decision 060), not one call per row: the key is read once per statement instead of once per
-- event, and the rows no longer queue an after-trigger event each. The payloads are those of
-- migration 016, byte for byte, and go out in id order, the order the bridge publishes in.
-- SECURITY DEFINER so a writer needs no access to the key. A trigger function cannot be called
-- from SQL, but any role may attach one to a table of its own (a temporary table needs nothing
-- more than a login), and PostgreSQL grants EXECUTE to PUBLIC: migration 016's function signed
-- whatever such a table held. EXECUTE is revoked below, so only the events table's own trigger,
-- made by the owner, signs, and only the rows its statement inserted.
CREATE FUNCTION events_notify_inserted() RETURNS trigger
SECURITY DEFINER SET search_path = pg_catalog AS $$
DECLARE
  keys record;
BEGIN
  SELECT inner_key, outer_key INTO keys FROM handshake_private.event_notify_key;
  PERFORM pg_notify('handshake_events', CASE
    -- Too large for PostgreSQL's 8000-byte payload with margin: the id alone, as before.
    WHEN octet_length(event.body) > 7800 THEN event.id::text
    ELSE event.id::text || ' ' || encode(
      sha256(keys.outer_key || sha256(keys.inner_key || convert_to(event.body, 'UTF8'))), 'hex'
    ) || ' ' || event.body
  END)
  FROM (
    SELECT id, json_build_object(
      'id', id,
      'kind', kind,
      'subject', subject,
      'data', data,
      'at', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    )::text AS body
    FROM inserted
    ORDER BY id
  ) event;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

DROP TRIGGER events_notify_insert ON events;
CREATE TRIGGER events_notify_insert
  AFTER INSERT ON events REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION events_notify_inserted();
DROP FUNCTION events_notify();
-- A trigger's function is checked for EXECUTE when the trigger is made, not when it fires.
REVOKE EXECUTE ON FUNCTION events_notify_inserted() FROM PUBLIC;

-- Down Migration

CREATE FUNCTION events_notify() RETURNS trigger
SECURITY DEFINER SET search_path = pg_catalog AS $$
DECLARE
  body text := json_build_object(
    'id', NEW.id,
    'kind', NEW.kind,
    'subject', NEW.subject,
    'data', NEW.data,
    'at', to_char(NEW.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  )::text;
  keys record;
BEGIN
  IF octet_length(body) > 7800 THEN
    PERFORM pg_notify('handshake_events', NEW.id::text);
    RETURN NULL;
  END IF;
  SELECT inner_key, outer_key INTO keys FROM handshake_private.event_notify_key;
  PERFORM pg_notify('handshake_events', NEW.id::text || ' ' || encode(
    sha256(keys.outer_key || sha256(keys.inner_key || convert_to(body, 'UTF8'))), 'hex'
  ) || ' ' || body);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

DROP TRIGGER events_notify_insert ON events;
CREATE TRIGGER events_notify_insert
  AFTER INSERT ON events
  FOR EACH ROW EXECUTE FUNCTION events_notify();
REVOKE EXECUTE ON FUNCTION events_notify() FROM PUBLIC;
DROP FUNCTION events_notify_inserted();
