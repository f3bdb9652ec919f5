-- Up Migration

-- One scope per API token (docs/drafts/security-scopes.md). Tokens minted before scopes existed
-- could do everything their owner could: a Lead's become `admin`; anyone else's become `read`, the
-- only scope a viewer may hold. No default afterwards: every new token states its scope.
CREATE TYPE token_scope AS ENUM ('admin', 'decide', 'read', 'connect', 'supervisor');
ALTER TABLE api_tokens ADD COLUMN scope token_scope NOT NULL DEFAULT 'admin';
UPDATE api_tokens SET scope = 'read'
  FROM users WHERE users.id = api_tokens.user_id AND users.role <> 'lead';
ALTER TABLE api_tokens ALTER COLUMN scope DROP DEFAULT;

-- The token that registered an agent: a `connect` token may respawn only the agents it owns.
ALTER TABLE agents ADD COLUMN owner_token_id uuid REFERENCES api_tokens (id) ON DELETE SET NULL;
CREATE INDEX agents_owner_token_id_idx ON agents (owner_token_id);

-- Who decided, written by the same compare-and-set that decides. NOT VALID: requests decided
-- before this migration have no record and, being final, can never be given one; every row
-- written from now on is checked.
ALTER TABLE requests ADD COLUMN decided_by jsonb;
ALTER TABLE requests ADD CONSTRAINT requests_decision_has_decided_by CHECK (
  (status IN ('approved', 'rejected', 'expired')) = (decided_by IS NOT NULL)
  AND (decided_by IS NULL OR decided_by->>'kind' IN ('human', 'token', 'timeout', 'agent'))
) NOT VALID;

-- Down Migration

ALTER TABLE requests DROP CONSTRAINT requests_decision_has_decided_by;
ALTER TABLE requests DROP COLUMN decided_by;
DROP INDEX agents_owner_token_id_idx;
ALTER TABLE agents DROP COLUMN owner_token_id;
ALTER TABLE api_tokens DROP COLUMN scope;
DROP TYPE token_scope;
