-- Up Migration

-- The events insert trigger sends the whole event, not only its id, so the bridge can publish it
-- without reading the row back (lib/realtime/event-bridge.ts, docs/decisions/032). Anyone who can
-- connect to the database can pg_notify on any channel, so the payload carries an HMAC-SHA256 of
-- the event under a key only this database's owner reads: a payload the trigger did not write is
-- only a hint to read the table. The key lives outside `public`, in a schema granted to nobody.
CREATE SCHEMA handshake_private;
REVOKE ALL ON SCHEMA handshake_private FROM PUBLIC;

-- The key and its HMAC pads (key XOR 0x36.., key XOR 0x5c..), 64 bytes each: SQL has no bytea XOR
-- to compute them per insert.
CREATE TABLE handshake_private.event_notify_key (
  key       bytea NOT NULL CHECK (octet_length(key) = 64),
  inner_key bytea NOT NULL,
  outer_key bytea NOT NULL
);
REVOKE ALL ON handshake_private.event_notify_key FROM PUBLIC;

DO $$
DECLARE
  -- Four random UUIDs (122 random bits each), hashed into 64 bytes.
  k bytea := sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'))
          || sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'));
  i bytea := k;
  o bytea := k;
BEGIN
  FOR n IN 0..63 LOOP
    i := set_byte(i, n, get_byte(k, n) # 54);
    o := set_byte(o, n, get_byte(k, n) # 92);
  END LOOP;
  INSERT INTO handshake_private.event_notify_key VALUES (k, i, o);
END;
$$;

-- Payload: "<id> <hmac hex> <event JSON>", the JSON in the shape the bridge publishes; an event
-- whose payload would not fit PostgreSQL's 8000-byte limit with margin sends "<id>" alone, as
-- before. SECURITY DEFINER so a writer needs no access to the key; trigger functions cannot be
-- called from SQL, so it signs nothing but inserted rows.
CREATE OR REPLACE FUNCTION events_notify() RETURNS trigger
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

-- Down Migration

CREATE OR REPLACE FUNCTION events_notify() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('handshake_events', NEW.id::text);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
DROP SCHEMA handshake_private CASCADE;
