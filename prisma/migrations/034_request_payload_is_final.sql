-- Up Migration

-- A request's payload is what the Lead reads and what a decision answers, and a decision names the
-- request by its id alone: the payload never changes once stored, pending or not (a new plan is a
-- new request that supersedes the old). The application never writes it again; here the database
-- refuses it too, whoever issues the update. `UPDATE OF payload` fires only for statements that
-- set the column, so the hot paths' updates pay nothing.
CREATE FUNCTION requests_refuse_payload_update() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'request %''s payload is final: a changed request is a new request', OLD.id
    USING ERRCODE = 'check_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER requests_payload_is_final
  BEFORE UPDATE OF payload ON requests
  FOR EACH ROW WHEN (OLD.payload IS DISTINCT FROM NEW.payload)
  EXECUTE FUNCTION requests_refuse_payload_update();

-- Down Migration

DROP TRIGGER requests_payload_is_final ON requests;
DROP FUNCTION requests_refuse_payload_update;
