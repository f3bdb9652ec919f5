-- Up Migration

-- An agent's timeline reads the messages it sent as well as those it received.
CREATE INDEX messages_sender_id_idx ON messages (sender, id);

-- Down Migration

DROP INDEX messages_sender_id_idx;
