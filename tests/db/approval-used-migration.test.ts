import pg from "pg";
import { describe, expect, it } from "vitest";
import { migrationDatabase } from "../support/migration-database";

// Migration 020 on a database that already holds approvals, used and not: the rows the migration
// marks are decided requests, which the terminal-state trigger guards.
const database = migrationDatabase("handshake_migration_020");

describe("migration 020 (approval_used)", () => {
  it("marks the approvals calls already used or voided, and no others", async () => {
    await database.migrateBefore("020_");
    const db = new pg.Client({ connectionString: database.url() });
    await db.connect();
    try {
      const {
        rows: [agent],
      } = await db.query<{ id: string }>(
        "INSERT INTO agents (name, role, token_hash) VALUES ('migrated', 'tester', 'h') RETURNING id",
      );
      const approval = async (id: string) => {
        await db.query(
          `INSERT INTO requests (id, type, agent_id, sender, target, status, payload, responded_by,
                                 responded_at, decided_by, incarnation, expires_at)
           VALUES ($1, 'tool_approval', $2, 'migrated', 'lead', 'approved', '{}', 'lead', now(),
                   '{"kind":"human","userId":"u","sessionId":"s"}', 1, now() + interval '1 hour')`,
          [id, agent?.id],
        );
      };
      const call = (requestId: string, isAllowed: boolean, code: string | null) =>
        db.query(
          `INSERT INTO tool_calls (agent_id, incarnation, tool, args, gate, is_allowed, code, request_id)
           VALUES ($1, 1, 'bash', '{}', 'approved', $2, $3, $4)`,
          [agent?.id, isAllowed, code, requestId],
        );
      const [ran, voided, refused, waiting] = ["a", "b", "c", "d"].map(
        (digit) => `req_${digit.repeat(32)}`,
      ) as [string, string, string, string];
      for (const id of [ran, voided, refused, waiting]) await approval(id);
      await call(ran, true, null);
      await call(voided, false, "FILE_CHANGED");
      await call(refused, false, "TOOL_APPROVAL_DENIED");

      expect(await database.migrateRest()).toHaveLength(database.countFrom("020_"));

      const { rows } = await db.query<{ id: string; approval_used: boolean }>(
        "SELECT id, approval_used FROM requests ORDER BY id",
      );
      expect(rows).toEqual([
        { id: ran, approval_used: true },
        { id: voided, approval_used: true },
        { id: refused, approval_used: false },
        { id: waiting, approval_used: false },
      ]);
    } finally {
      await db.end();
    }
  });
});
