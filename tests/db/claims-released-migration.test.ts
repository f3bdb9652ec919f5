import pg from "pg";
import { describe, expect, it } from "vitest";
import { migrationDatabase } from "../support/migration-database";

// Migration 030 on a database that holds claims made before decision 074: those of ended or
// replaced incarnations go back to the pool, a live incarnation's own claim stays.
const database = migrationDatabase("handshake_migration_030");

describe("migration 030 (claims of ended incarnations released)", () => {
  it("gives back the tasks no live incarnation holds, each with its event", async () => {
    await database.migrateBefore("030_");
    const db = new pg.Client({ connectionString: database.url() });
    await db.connect();
    try {
      const task = async (title: string) =>
        (
          await db.query<{ id: string }>(
            "INSERT INTO tasks (title, status) VALUES ($1, 'open') RETURNING id",
            [title],
          )
        ).rows[0]?.id as string;
      const [held, ofStopped, ofReplaced] = [
        await task("held"),
        await task("of-stopped"),
        await task("of-replaced"),
      ];
      const agent = async (name: string, status: string, taskId: string | null) =>
        (
          await db.query<{ id: string }>(
            `INSERT INTO agents (name, role, token_hash, status, task_id)
             VALUES ($1, 'tester', 'hash-' || $1, $2, $3) RETURNING id`,
            [name, status, taskId],
          )
        ).rows[0]?.id as string;
      const claim = (taskId: string, agentId: string) =>
        db.query("UPDATE tasks SET status = 'claimed', assignee_id = $2 WHERE id = $1", [
          taskId,
          agentId,
        ]);
      await claim(held, await agent("live", "working", held));
      await claim(ofStopped, await agent("stopped", "shutdown", ofStopped));
      await claim(ofReplaced, await agent("replaced", "idle", null));

      expect(await database.migrateRest()).toHaveLength(database.countFrom("030_"));

      const tasks = await db.query<{ title: string; status: string; assignee: string | null }>(
        `SELECT title, tasks.status, agents.name AS assignee
         FROM tasks LEFT JOIN agents ON agents.id = tasks.assignee_id ORDER BY title`,
      );
      expect(tasks.rows).toEqual([
        { title: "held", status: "claimed", assignee: "live" },
        { title: "of-replaced", status: "open", assignee: null },
        { title: "of-stopped", status: "open", assignee: null },
      ]);
      const agents = await db.query("SELECT name, task_id FROM agents ORDER BY name");
      expect(agents.rows).toEqual([
        { name: "live", task_id: held },
        { name: "replaced", task_id: null },
        { name: "stopped", task_id: null },
      ]);
      const events = await db.query("SELECT kind, subject, data FROM events ORDER BY id");
      expect(events.rows).toEqual(
        [ofStopped, ofReplaced].sort().map((id) => ({
          kind: "task.updated",
          subject: `task:${id}`,
          data: {
            taskId: id,
            status: "open",
            agent: id === ofStopped ? "stopped" : "replaced",
          },
        })),
      );
    } finally {
      await db.end();
    }
  });
});
