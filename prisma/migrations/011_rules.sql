-- Up Migration

-- Standing decisions the gate applies before a person is asked (docs/decisions/022). A rule is a
-- pattern in Claude Code's notation, an effect, a scope ({kind, …}: agent, role, token, project,
-- everyone), a mode (shadow rules only record what they would have done) and an optional expiry.
-- The pattern is parsed by lib/shared/rules/pattern.ts on every write; the checks below keep the
-- closed lists closed for any writer.
CREATE TABLE rules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  pattern text NOT NULL,
  effect text NOT NULL,
  scope jsonb NOT NULL,
  mode text NOT NULL DEFAULT 'enforce',
  required_approvals integer NOT NULL DEFAULT 1,
  expires_at timestamptz(3),
  created_by text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT rules_pattern_length CHECK (length(pattern) BETWEEN 1 AND 500),
  CONSTRAINT rules_effect CHECK (effect IN ('allow', 'ask', 'deny')),
  CONSTRAINT rules_mode CHECK (mode IN ('enforce', 'shadow')),
  CONSTRAINT rules_scope_kind CHECK (scope->>'kind' IN ('agent', 'role', 'token', 'project', 'everyone')),
  -- Only a card can need a second Lead: allow and deny ask nobody.
  CONSTRAINT rules_required_approvals CHECK (
    required_approvals IN (1, 2) AND (required_approvals = 1 OR effect = 'ask')
  )
);

-- A rule's approval is a decision like a person's: decided_by names the rule ({kind: "rule",
-- ruleId, pattern}). NOT VALID for the reason migration 004 gives.
ALTER TABLE requests DROP CONSTRAINT requests_decision_has_decided_by;
ALTER TABLE requests ADD CONSTRAINT requests_decision_has_decided_by CHECK (
  (status::text IN ('approved', 'rejected', 'expired', 'answered', 'unanswered')) = (decided_by IS NOT NULL)
  AND (decided_by IS NULL OR decided_by->>'kind' IN ('human', 'token', 'timeout', 'agent', 'rule'))
) NOT VALID;

-- Down Migration

ALTER TABLE requests DROP CONSTRAINT requests_decision_has_decided_by;
ALTER TABLE requests ADD CONSTRAINT requests_decision_has_decided_by CHECK (
  (status::text IN ('approved', 'rejected', 'expired', 'answered', 'unanswered')) = (decided_by IS NOT NULL)
  AND (decided_by IS NULL OR decided_by->>'kind' IN ('human', 'token', 'timeout', 'agent'))
) NOT VALID;
DROP TABLE rules;
