-- Up Migration

-- Where an agent's tools run, as its worker reports it: in Handshake's sandbox, nowhere (no
-- sandbox on that machine, so bash is disabled), or on the user's own machine (a connector).
-- NULL until the first heartbeat that says.
CREATE TYPE tool_host AS ENUM ('sandboxed', 'no_sandbox', 'external');
ALTER TABLE agents ADD COLUMN tool_host tool_host;

-- Down Migration

ALTER TABLE agents DROP COLUMN tool_host;
DROP TYPE tool_host;
