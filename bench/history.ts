import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "../lib/generated/prisma/client";
import { listRequests } from "../lib/requests/data";
import { listRequestsQuerySchema } from "../lib/requests/schema";

/**
 * G3.5 data: `count` decided requests spread over the agents that exist, 30 days back, written
 * with one INSERT … SELECT generate_series (the product's write path is what G3.3 measures).
 * Mix: 2/3 plans, 1/3 tool calls, 1/20 shutdowns; 70% approved, 20% rejected, 10% expired.
 */
export async function insertHistory(
  databaseUrl: string,
  count: number,
  leadEmail: string,
): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "bench-seed" });
  await client.connect();
  try {
    await client.query(
      `WITH numbered AS (
         SELECT id, name, row_number() OVER (ORDER BY name) - 1 AS k FROM agents
       ), total AS (SELECT count(*) AS n FROM agents)
       INSERT INTO requests (id, type, agent_id, sender, target, status, payload, feedback,
                             responded_by, responded_at, decided_by, incarnation, work_version,
                             created_at, expires_at)
       SELECT 'req_' || md5('bench-history-' || g),
              CASE WHEN g % 20 = 0 THEN 'shutdown' WHEN g % 3 = 0 THEN 'tool_approval'
                   ELSE 'plan_approval' END,
              numbered.id, numbered.name, 'lead',
              (CASE WHEN g % 10 < 7 THEN 'approved' WHEN g % 10 < 9 THEN 'rejected'
                    ELSE 'expired' END)::request_status,
              jsonb_build_object('plan', 'historical plan ' || g || ': read, change, test'),
              CASE WHEN g % 10 BETWEEN 7 AND 8 THEN 'not this way: split it up'
                   WHEN g % 10 = 9 THEN 'timed out: reject' END,
              CASE WHEN g % 10 = 9 THEN 'system' ELSE $2 END,
              at + interval '2 minutes',
              -- Every decision says who made it (migration 004's CHECK): the Lead's token, or the
              -- timeout's policy.
              CASE WHEN g % 10 = 9 THEN '{"kind": "timeout", "policy": "reject"}'::jsonb
                   ELSE jsonb_build_object('kind', 'token', 'userId', 'bench-history',
                                           'tokenId', 'bench-history', 'tokenName', 'bench') END,
              1, 0, at, at + interval '15 minutes'
       FROM generate_series(1, $1::int) AS g
       CROSS JOIN total
       JOIN numbered ON numbered.k = g % total.n
       CROSS JOIN LATERAL (
         SELECT now() - interval '30 days' + g * (interval '25 days' / $1::int) AS at
       ) AS t`,
      [count, leadEmail],
    );
    await client.query("ANALYZE requests");
    await client.query("ANALYZE agents");
  } finally {
    await client.end();
  }
}

export type CapturedQuery = { sql: string; params: unknown[] };

/**
 * The statements on `requests` a piece of the product sends, captured from Prisma's query log
 * while `run` calls it with a client of its own; the SQL and values exactly as sent.
 */
export async function captureRequestsSql(
  databaseUrl: string,
  run: (db: PrismaClient) => Promise<unknown>,
): Promise<CapturedQuery[]> {
  const db = new PrismaClient({
    adapter: new PrismaPg({ connectionString: databaseUrl, max: 1 }),
    log: [{ emit: "event", level: "query" }],
  });
  const captured: CapturedQuery[] = [];
  db.$on("query", (event) =>
    captured.push({ sql: event.query, params: JSON.parse(event.params) as unknown[] }),
  );
  try {
    await run(db);
  } finally {
    await db.$disconnect();
  }
  return captured.filter((entry) => /\bFROM "public"\."requests"/.test(entry.sql));
}

/**
 * The SQL the product runs for a history query: the same domain function (lib/requests/data.ts
 * listRequests) the route calls.
 */
export function captureHistorySql(
  databaseUrl: string,
  query: Record<string, string>,
): Promise<CapturedQuery[]> {
  return captureRequestsSql(databaseUrl, (db) =>
    listRequests(db, listRequestsQuerySchema.parse(query)),
  );
}

export type ExplainResult = { plan: string; indexes: string[]; isSeqScan: boolean };

export async function explain(databaseUrl: string, query: CapturedQuery): Promise<ExplainResult> {
  const client = new pg.Client({
    connectionString: databaseUrl,
    application_name: "bench-explain",
  });
  await client.connect();
  try {
    const { rows } = await client.query<{ "QUERY PLAN": string }>(
      `EXPLAIN (ANALYZE, BUFFERS) ${query.sql}`,
      query.params,
    );
    const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
    const indexes = [
      ...new Set(
        [
          ...plan.matchAll(
            /(?:Index|Index Only|Bitmap Index) Scan(?: Backward)? (?:using|on) (\w+)/g,
          ),
        ]
          .map((match) => match[1] ?? "")
          .filter(Boolean),
      ),
    ];
    return { plan, indexes, isSeqScan: /Seq Scan on requests/.test(plan) };
  } finally {
    await client.end();
  }
}
