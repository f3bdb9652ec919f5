-- Up Migration

-- The risk class a tool call was judged to be and why ({class, code?, reasons}); null for calls
-- recorded before the bash parser classified them.
ALTER TABLE tool_calls ADD COLUMN risk jsonb;

-- Down Migration

ALTER TABLE tool_calls DROP COLUMN risk;
