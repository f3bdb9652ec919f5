import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { agentSideProcessEnv } from "../../lib/env";
import type { PrismaClient } from "../../lib/generated/prisma/client";
import { createApiToken } from "../../lib/tokens/mutations";
import { HandshakeClient } from "../../lib/sdk/agent-client";
import { startApiNode, type ApiNode } from "../support/api-node";
import { startFaultProxy } from "../support/fault-proxy";
import {
  ApiError,
  createHuman,
  createOwnDatabase,
  LeadApi,
  registerApiAgent,
  sleep,
  waitUntil,
  writeFigures,
  type AgentHandle,
} from "../support/reliability";

// An agent that crashes and retries its submission with the same idempotency key gets the same
// request, never a second one; a decision made while it was down is in its inbox when it is back.
// The agent here is a real OS process (tests/support/idempotent-agent.ts) killed with SIGKILL.

const AGENT_ENTRY = path.resolve(import.meta.dirname, "../support/idempotent-agent.ts");
const ROOT = path.resolve(import.meta.dirname, "../..");

let database: Awaited<ReturnType<typeof createOwnDatabase>>;
let db: PrismaClient;
let node: ApiNode;
let lead: LeadApi;
let proxy: Awaited<ReturnType<typeof startFaultProxy>>;
const children = new Set<ChildProcess>();
const figures = { cases: 0, submissions: 0, lost: 0, duplicates: 0, agentCrashes: 0 };
const scenarios: Record<string, unknown> = {};

beforeAll(async () => {
  database = await createOwnDatabase(inject("adminDatabaseUrl"), "handshake_agent_retry");
  db = database.db;
  const leadUser = await createHuman(db, "lead");
  const { token } = await createApiToken(db, leadUser.userId, {
    name: "agent-retry",
    scope: "admin",
  });
  node = await startApiNode({ databaseUrl: database.url, label: "retry" });
  lead = new LeadApi(node.url, token);
  proxy = await startFaultProxy(node.port);
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await proxy?.close();
  const serverErrors = node?.serverErrors() ?? 0;
  const serverErrorDetails = node?.serverErrorDetails() ?? [];
  await node?.stop();
  await database?.drop();
  await writeFigures("agent-retry", {
    title: "Agent crash and retry with an idempotency key",
    ...figures,
    scenarios,
    serverErrors,
    serverErrorDetails,
  });
}, 30_000);

type Line = { step: string; id?: string; status?: string; approve?: boolean; messageId?: number };

/** Starts the agent process; `lines` fills with what it prints. */
function runAgent(agent: AgentHandle, key: string, url = node.url) {
  const child = spawn(process.execPath, ["--import", "tsx", AGENT_ENTRY, key], {
    cwd: ROOT,
    env: agentSideProcessEnv({ HANDSHAKE_URL: url, HANDSHAKE_AGENT_TOKEN: agent.token }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  const lines: Line[] = [];
  let stderr = "";
  let buffer = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8");
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    for (const part of parts) if (part.trim()) lines.push(JSON.parse(part) as Line);
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  const step = (name: string, timeoutMs = 20_000) =>
    waitUntil(
      `agent step '${name}' (stderr: ${stderr.slice(-500)})`,
      () => lines.find((line) => line.step === name),
      timeoutMs,
      20,
    );
  const crash = async () => {
    child.kill("SIGKILL");
    const exit = await exited;
    figures.agentCrashes += 1;
    return exit;
  };
  return { lines, step, exited, crash };
}

async function requestsUnderKey(agentName: string, key: string) {
  return db.request.findMany({ where: { agent: { name: agentName }, idempotencyKey: key } });
}

async function eventsFor(kind: string, requestId: string): Promise<number> {
  return db.event.count({ where: { kind, subject: `request:${requestId}` } });
}

describe("agent crash and retry with an idempotency key", () => {
  it("a crash while waiting: the retry gets the same request and the decision made meanwhile", async () => {
    const agent = await registerApiAgent(lead, node.url, "retry-waiting");
    const key = "plan-after-crash";
    const first = runAgent(agent, key);
    const submitted = await first.step("submitted");
    await sleep(300); // it is long-polling now
    expect((await first.crash()).signal).toBe("SIGKILL");

    // Decided while the agent is down.
    await lead.respond(String(submitted.id), {
      type: "plan_approval_response",
      approve: true,
      feedback: "go ahead",
    });

    const second = runAgent(agent, key);
    const resubmitted = await second.step("submitted");
    const answered = await second.step("answered");
    expect(await second.exited).toEqual({ code: 0, signal: null });

    expect(resubmitted).toMatchObject({ id: submitted.id, status: "approved" });
    expect(answered).toMatchObject({ id: submitted.id, approve: true, status: "approved" });
    const rows = await requestsUnderKey(agent.name, key);
    expect(rows.map((row) => row.id)).toEqual([submitted.id]);
    expect(await db.request.count({ where: { agent: { name: agent.name } } })).toBe(1);
    expect(await eventsFor("request.created", String(submitted.id))).toBe(1);
    expect(await eventsFor("request.decided", String(submitted.id))).toBe(1);
    figures.cases += 1;
    figures.submissions += 2;
    scenarios.crashWhileWaiting = { sameRequest: true, decisionDeliveredOnRestart: true };
  });

  it("a crash after the server committed but before the answer arrived: the retry gets that request", async () => {
    const agent = await registerApiAgent(lead, node.url, "retry-lost-answer");
    const key = "plan-lost-answer";
    // The submission reaches the server and commits; its response never reaches the agent.
    proxy.setMode("swallow");
    const first = runAgent(agent, key, proxy.url);
    await first.step("submitting");
    const [committed] = await waitUntil("the submission to commit", async () => {
      const rows = await requestsUnderKey(agent.name, key);
      return rows.length > 0 && rows;
    });
    expect(first.lines.map((line) => line.step)).toEqual(["submitting"]);
    await first.crash();
    proxy.setMode("pass");

    const second = runAgent(agent, key, proxy.url);
    const submitted = await second.step("submitted");
    expect(submitted).toMatchObject({ id: committed?.id, status: "pending" });
    await lead.respond(String(submitted.id), {
      type: "plan_approval_response",
      approve: false,
      feedback: "smaller steps",
    });
    const answered = await second.step("answered");
    expect(answered).toMatchObject({ id: committed?.id, approve: false, status: "rejected" });
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(await requestsUnderKey(agent.name, key)).toHaveLength(1);
    expect(await db.request.count({ where: { agent: { name: agent.name } } })).toBe(1);
    expect(await eventsFor("request.created", String(committed?.id))).toBe(1);
    figures.cases += 1;
    figures.submissions += 2;
    scenarios.crashAfterCommit = { sameRequest: true, decisionDelivered: true };
  });

  it("a connection reset on the answer: the client's own retry returns the same request", async () => {
    const agent = await registerApiAgent(lead, node.url, "retry-reset");
    const viaProxy = new HandshakeClient(proxy.url, agent.token);
    const lostBefore = proxy.lostResponses();
    proxy.setMode("reset", { once: true });
    const request = await viaProxy.submitRequest({
      type: "plan_approval",
      payload: { plan: "through a flaky link" },
      idempotencyKey: "plan-reset",
    });
    expect(proxy.lostResponses()).toBe(lostBefore + 1);
    const rows = await requestsUnderKey(agent.name, "plan-reset");
    expect(rows.map((row) => row.id)).toEqual([request.id]);
    expect(await eventsFor("request.created", request.id)).toBe(1);
    figures.cases += 1;
    figures.submissions += 2;
    scenarios.connectionReset = { lostResponses: 1, requests: rows.length };
  });

  it("ten simultaneous retries of one key create one request, one event, one message to the Lead", async () => {
    const agent = await registerApiAgent(lead, node.url, "retry-burst");
    const key = "plan-burst";
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        agent.client.submitRequest({
          type: "plan_approval",
          payload: { plan: "the same plan" },
          idempotencyKey: key,
        }),
      ),
    );
    const ids = new Set(results.map((result) => result.id));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    expect(await requestsUnderKey(agent.name, key)).toHaveLength(1);
    expect(await eventsFor("request.created", String(id))).toBe(1);
    const toLead = await db.message.findMany({
      where: { recipient: "lead", type: "plan_approval" },
    });
    expect(
      toLead.filter((message) => (message.metadata as { requestId?: string }).requestId === id),
    ).toHaveLength(1);
    figures.cases += 1;
    figures.submissions += results.length;
    scenarios.simultaneousRetries = { submissions: results.length, requests: ids.size };
  });

  it("a retry of an older key after a newer plan superseded it returns the old request, not a new one", async () => {
    const agent = await registerApiAgent(lead, node.url, "retry-superseded");
    const older = await agent.client.submitRequest({
      type: "plan_approval",
      payload: { plan: "first idea" },
      idempotencyKey: "idea-1",
    });
    const newer = await agent.client.submitRequest({
      type: "plan_approval",
      payload: { plan: "second idea" },
      idempotencyKey: "idea-2",
    });
    const retried = await agent.client.submitRequest({
      type: "plan_approval",
      payload: { plan: "first idea" },
      idempotencyKey: "idea-1",
    });
    expect(retried).toMatchObject({ id: older.id, status: "superseded" });
    expect((await lead.getRequest(newer.id)).status).toBe("pending");
    expect(await db.request.count({ where: { agent: { name: agent.name } } })).toBe(2);
    // The same key for another request type is refused, not silently mapped.
    const reused = await agent.client
      .submitRequest({ type: "shutdown", payload: {}, idempotencyKey: "idea-1" })
      .catch((error: unknown) => error);
    expect(reused).toBeInstanceOf(ApiError);
    expect((reused as ApiError).code).toBe("IDEMPOTENCY_KEY_REUSED");
    figures.cases += 1;
    figures.submissions += 4;
    scenarios.retryAfterSupersede = { sameRequest: true, keyReuseRefused: true };
  });

  it("counts no duplicate and no lost request across all scenarios", async () => {
    const duplicates = await db.$queryRaw<{ count: bigint }[]>`
      SELECT count(*) AS count FROM (
        SELECT agent_id, idempotency_key FROM requests WHERE idempotency_key IS NOT NULL
        GROUP BY 1, 2 HAVING count(*) > 1) AS d`;
    figures.duplicates = Number(duplicates[0]?.count ?? 0);
    expect(figures.duplicates).toBe(0);
    expect(figures.cases).toBe(5);
  });
});
