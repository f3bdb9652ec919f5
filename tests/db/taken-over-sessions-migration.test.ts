import pg from "pg";
import { describe, expect, it } from "vitest";
import { migrationDatabase } from "../support/migration-database";

// Migration 031 on a database where the Lead registered a session's name again before decision
// 075: that agent lets its session go; a session's own agent keeps its key.
const database = migrationDatabase("handshake_migration_031");

describe("migration 031 (sessions of taken-over agents released)", () => {
  it("clears the session key of an agent its token no longer owns, and no other", async () => {
    await database.migrateBefore("031_");
    const db = new pg.Client({ connectionString: database.url() });
    await db.connect();
    try {
      const {
        rows: [user],
      } = await db.query<{ id: string }>(
        `INSERT INTO users (id, name, email, role) VALUES ('u1', 'Ada', 'ada@example.com', 'lead')
         RETURNING id`,
      );
      const {
        rows: [token],
      } = await db.query<{ id: string }>(
        `INSERT INTO api_tokens (user_id, name, scope, token_hash)
         VALUES ($1, 'laptop', 'connect', 'th') RETURNING id`,
        [user?.id],
      );
      const agent = (name: string, owner: string | null, key: string) =>
        db.query(
          `INSERT INTO agents (name, role, token_hash, owner_token_id, connector_key, connector,
                               tool_host)
           VALUES ($1, 'r', 'hash-' || $1, $2, $3, '{"cwd":"/home/ada/api"}', 'external')`,
          [name, owner, key],
        );
      await agent("sessions-own", token?.id ?? null, `${token?.id}/s1/`);
      await agent("taken-over", null, `${token?.id}/s2/`);

      expect(await database.migrateRest()).toHaveLength(database.countFrom("031_"));

      const { rows } = await db.query(
        "SELECT name, connector_key IS NOT NULL AS keyed, connector IS NOT NULL AS connected, tool_host FROM agents ORDER BY name",
      );
      expect(rows).toEqual([
        { name: "sessions-own", keyed: true, connected: true, tool_host: "external" },
        { name: "taken-over", keyed: false, connected: false, tool_host: null },
      ]);
    } finally {
      await db.end();
    }
  });
});
