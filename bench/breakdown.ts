import { randomBytes } from "node:crypto";
import pg from "pg";
import type { AgentActor } from "../lib/auth/actor";
import { createDb } from "../lib/db";
import { submitRequest } from "../lib/requests/mutations";
import { callApi, type Agent } from "./clients";
import { now } from "./stats";

/**
 * Where one plan submission's time goes (the cost behind G3.2 and G3.3), three ways, interleaved:
 * - raw: the same statements the product's transaction sends, in the same order, through `pg`
 *   (lock and read the agent, find the pending plan, supersede it, the inserts and updates, and
 *   one multi-row insert of their four events), so only the driver sits between the bench and PostgreSQL;
 * - domain: lib/requests/mutations submitRequest called in-process through Prisma;
 * - http: POST /api/v1/requests to the server (auth, Next, the same domain function).
 * Each way uses its own agent, so every submission supersedes the previous one alike.
 */
export async function measureSubmissionBreakdown(options: {
  databaseUrl: string;
  baseUrl: string;
  agents: { raw: Agent; domain: Agent; http: Agent };
  samples: number;
  blocks: number;
}): Promise<{ rawMs: number[]; domainMs: number[]; httpMs: number[] }> {
  const { databaseUrl, agents } = options;
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "bench-raw-tx" });
  await client.connect();
  const db = createDb(databaseUrl);
  try {
    const idOf = async (name: string) =>
      (await client.query<{ id: string }>("SELECT id FROM agents WHERE name = $1", [name])).rows[0]
        ?.id ?? "";
    const rawAgentId = await idOf(agents.raw.name);
    const domainActor: AgentActor = {
      kind: "agent",
      agentId: await idOf(agents.domain.name),
      name: agents.domain.name,
      incarnation: 1,
    };
    const payload = { plan: "breakdown: read the code, change it, run the tests" };
    const events = (rows: [kind: string, subject: string, data: object][]) =>
      client.query(
        `INSERT INTO events (kind, subject, data, created_at)
         SELECT kind, subject, data, now() FROM jsonb_to_recordset($1::jsonb) AS e(kind text, subject text, data jsonb)`,
        [JSON.stringify(rows.map(([kind, subject, data]) => ({ kind, subject, data })))],
      );

    const raw = async () => {
      const name = agents.raw.name;
      await client.query("BEGIN");
      await client.query("SELECT * FROM agents WHERE id = $1::uuid FOR UPDATE", [rawAgentId]);
      const pending = await client.query<{ id: string }>(
        "SELECT * FROM requests WHERE agent_id = $1 AND type = 'plan_approval' AND status = 'pending' LIMIT 1",
        [rawAgentId],
      );
      const previous = pending.rows[0]?.id;
      const queued: [string, string, object][] = [];
      if (previous) {
        await client.query(
          "UPDATE requests SET status = 'superseded', feedback = $2, responded_by = 'system', responded_at = now() WHERE id = $1 AND status = 'pending' RETURNING *",
          [previous, "superseded by a newer request"],
        );
        queued.push(["request.superseded", `request:${previous}`, { requestId: previous }]);
      }
      const id = `req_${randomBytes(16).toString("hex")}`;
      await client.query(
        `INSERT INTO requests (id, type, agent_id, sender, target, payload, incarnation, work_version, expires_at)
         VALUES ($1, 'plan_approval', $2, $3, 'lead', $4, 1, 0, now() + interval '15 minutes') RETURNING *`,
        [id, rawAgentId, name, JSON.stringify(payload)],
      );
      await client.query(
        "UPDATE agents SET gate = 'pending', status = 'waiting_approval', updated_at = now() WHERE id = $1 RETURNING *",
        [rawAgentId],
      );
      queued.push(["agent.updated", `agent:${name}`, { agent: name, gate: "pending" }]);
      await client.query(
        "INSERT INTO messages (sender, recipient, type, content, metadata) VALUES ($1, 'lead', 'plan_approval', $2, $3) RETURNING id",
        [name, payload.plan, JSON.stringify({ requestId: id })],
      );
      queued.push(["message.sent", "inbox:lead", { to: "lead", from: name }]);
      queued.push(["request.created", `request:${id}`, { requestId: id, agent: name }]);
      await events(queued);
      await client.query("COMMIT");
    };
    const domain = () =>
      submitRequest(db, domainActor, { type: "plan_approval", payload }).then(() => undefined);
    const http = () =>
      callApi(options.baseUrl, { token: agents.http.token }, "POST", "/requests", {
        type: "plan_approval",
        payload,
      }).then(() => undefined);

    const result = { rawMs: [] as number[], domainMs: [] as number[], httpMs: [] as number[] };
    const perBlock = Math.ceil(options.samples / options.blocks);
    for (const run of [raw, domain, http]) for (let index = 0; index < 10; index++) await run();
    for (let block = 0; block < options.blocks; block++) {
      for (const [run, into] of [
        [raw, result.rawMs],
        [domain, result.domainMs],
        [http, result.httpMs],
      ] as const) {
        for (let index = 0; index < perBlock; index++) {
          const startedAt = now();
          await run();
          into.push(now() - startedAt);
        }
      }
    }
    return result;
  } finally {
    await client.query("ROLLBACK").catch(() => undefined);
    await client.end();
    await db.$disconnect();
  }
}
