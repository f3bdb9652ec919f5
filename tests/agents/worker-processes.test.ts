import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Supervisor } from "../../agents/supervisor";
import { getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import { startEventBridge, type EventBridge } from "../../lib/realtime/event-bridge";
import { getEventHub } from "../../lib/realtime/event-hub";
import { startSweeper } from "../../lib/requests/sweeper";
import { createApiToken } from "../../lib/tokens/mutations";
import { api, lead, uniqueName } from "../api/fixtures";
import { startApiServer } from "../support/api-server";

// Real processes: the production route handlers over HTTP, the supervisor, and one OS process
// per worker, each with only its token, the server URL and its workspace.
let apiServer: Awaited<ReturnType<typeof startApiServer>>;
let bridge: EventBridge;
let sweeper: { stop: () => void };
let supervisor: Supervisor;
let dataDir: string;

beforeAll(async () => {
  apiServer = await startApiServer();
  bridge = await startEventBridge({
    databaseUrl: requireDatabaseUrl(),
    db: getDb(),
    hub: getEventHub(),
  });
  sweeper = startSweeper(getDb(), { intervalMs: 200 });
  dataDir = await mkdtemp(path.join(tmpdir(), "handshake-workers-"));
  supervisor = await startSupervisor("supervisor");
}, 60_000);

/** A supervisor with its own `supervisor`-scoped token, following the test server's event log. */
async function startSupervisor(tokenName: string): Promise<Supervisor> {
  const { email } = await lead();
  const user = await getDb().user.findUniqueOrThrow({ where: { email } });
  const { token } = await createApiToken(getDb(), user.id, {
    name: tokenName,
    scope: "supervisor",
  });
  const started = new Supervisor({
    serverUrl: apiServer.url,
    supervisorToken: token,
    dataDir,
    heartbeatMs: 500,
    pollIntervalMs: 100,
  });
  await started.start();
  return started;
}

afterAll(async () => {
  await supervisor.stop();
  sweeper.stop();
  await bridge.stop();
  await apiServer.close();
  await getDb().$disconnect();
  await rm(dataDir, { recursive: true, force: true });
});

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 45_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function workspaceFile(agent: string, file: string): string {
  return path.join(dataDir, "workspaces", agent, file);
}

async function spawnScripted(
  script: string,
  options: { requirePlan?: boolean } = {},
): Promise<string> {
  const name = uniqueName(script.slice(0, 12));
  const response = await api.registerAgent((await lead()).headers, {
    name,
    role: "tester",
    requirePlan: options.requirePlan ?? false,
    worker: { model: "scripted", script },
  });
  expect(response.status).toBe(201);
  return name;
}

async function pendingRequest(agent: string, type: string, exceptId?: string) {
  return waitFor(`a pending ${type} from ${agent}`, () =>
    getDb().request.findFirst({
      where: {
        agent: { name: agent },
        type,
        status: "pending",
        ...(exceptId ? { id: { not: exceptId } } : {}),
      },
    }),
  );
}

async function agentRow(name: string) {
  return getDb().agent.findUniqueOrThrow({ where: { name } });
}

// Real worker processes start slowly on a busy machine (tsx, the bash grammar, the sandbox probe):
// the deadlines are generous, and no assertion is about how long anything took.
describe("worker processes under the supervisor", { timeout: 90_000 }, () => {
  it("with requirePlan: the first write_file is blocked, the plan is approved over HTTP, the next write_file creates the file", async () => {
    const name = await spawnScripted("write-after-approval", { requirePlan: true });
    const plan = await pendingRequest(name, "plan_approval");
    const blocked = await getDb().toolCall.findFirstOrThrow({
      where: { agent: { name }, tool: "write_file" },
    });
    expect(blocked).toMatchObject({ isAllowed: false, code: "PLAN_GATE_BLOCKED" });
    expect(existsSync(workspaceFile(name, "hello.txt"))).toBe(false);
    expect((await agentRow(name)).status).toBe("waiting_approval");

    const decided = await api.respond((await lead()).headers, plan.id, {
      type: "plan_approval_response",
      approve: true,
      feedback: "fine",
    });
    expect(decided.status).toBe(200);
    await waitFor("hello.txt", async () => existsSync(workspaceFile(name, "hello.txt")));
    expect(await readFile(workspaceFile(name, "hello.txt"), "utf8")).toBe("hello");
  });

  it("reject path: the feedback reaches the model and the revised plan gets a new id", async () => {
    const name = await spawnScripted("write-after-approval", { requirePlan: true });
    const first = await pendingRequest(name, "plan_approval");
    const { headers } = await lead();
    await api.respond(headers, first.id, {
      type: "plan_approval_response",
      approve: false,
      feedback: "name the file you will write",
    });
    const revised = await pendingRequest(name, "plan_approval", first.id);
    expect(revised.id).not.toBe(first.id);
    expect(JSON.stringify(revised.payload)).toContain("revised");
    expect(existsSync(workspaceFile(name, "hello.txt"))).toBe(false);
    await api.respond(headers, revised.id, { type: "plan_approval_response", approve: true });
    await waitFor("hello.txt", async () => existsSync(workspaceFile(name, "hello.txt")));

    // Approve a shutdown so the worker persists its transcript: the feedback is in what the model saw.
    const shutdown = await api.requestShutdown(headers, name);
    await waitFor("shutdown", async () => (await agentRow(name)).status === "shutdown");
    const state = JSON.parse(
      await readFile(path.join(dataDir, "agent-state", `${name}.json`), "utf8"),
    ) as { transcript: unknown[] };
    expect(JSON.stringify(state.transcript)).toContain("name the file you will write");
    expect((await api.getRequest(headers, String(shutdown.json.id))).json.status).toBe("approved");
  });

  it("shutdown approve: exits 0 with status shutdown, work completed, messages behind the shutdown not lost", async () => {
    const name = await spawnScripted("test-env-probe");
    await waitFor("done.txt", async () => existsSync(workspaceFile(name, "done.txt")));
    const { headers } = await lead();
    const shutdown = await api.requestShutdown(headers, name, { reason: "end of day" });
    const behind = await api.sendMessage(headers, { to: name, content: "one more thing" });
    await waitFor("shutdown", async () => (await agentRow(name)).status === "shutdown");
    const agent = await agentRow(name);
    expect(agent.isForcedStop).toBe(false);
    expect((await api.getRequest(headers, String(shutdown.json.id))).json).toMatchObject({
      status: "approved",
      respondedBy: name,
    });
    const stopped = await getDb().event.findFirstOrThrow({
      where: { kind: "agent.stopped", subject: `agent:${name}` },
    });
    expect(stopped.data).toMatchObject({ status: "shutdown", isForced: false });
    // The message that arrived behind the shutdown is still there, unacknowledged.
    expect(Number(agent.inboxAckedId)).toBeLessThan(Number(behind.json.id));
    expect(await getDb().message.count({ where: { id: BigInt(Number(behind.json.id)) } })).toBe(1);
    expect(supervisor.runningWorkers().map((worker) => worker.name)).not.toContain(name);
  });

  it("a risky tool call waits as waiting_approval and runs once the Lead approves that exact call", async () => {
    const name = await spawnScripted("read-only-auditor");
    const ask = await pendingRequest(name, "tool_approval");
    expect(ask.payload).toMatchObject({ tool: "bash", args: { command: "git push origin main" } });
    // Several heartbeats later the agent still reports that it is waiting on the Lead.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await agentRow(name)).status).toBe("waiting_approval");
    await api.respond((await lead()).headers, ask.id, {
      type: "tool_approval_response",
      approve: true,
    });
    const ran = await waitFor("the approved call to run", () =>
      getDb().toolCall.findFirst({
        where: { agent: { name }, tool: "bash", isAllowed: true, requestId: ask.id },
      }),
    );
    expect(ran.args).toMatchObject({ command: "git push origin main" });
    await waitFor(
      "the agent to stop waiting",
      async () => (await agentRow(name)).status !== "waiting_approval",
    );
  });

  it("bash inside a worker sees neither DATABASE_URL nor its token", async () => {
    const name = await spawnScripted("test-env-probe");
    await waitFor("env.txt", async () => existsSync(workspaceFile(name, "done.txt")));
    const seen = await readFile(workspaceFile(name, "env.txt"), "utf8");
    expect(seen).not.toMatch(/DATABASE_URL|HANDSHAKE_|hs_agent_|postgres(ql)?:\/\//);
    expect(seen).toMatch(/^PATH=/m);
  });

  it("shutdown reject: mid-write the worker keeps working and the Lead sees the reason", async () => {
    const name = await spawnScripted("test-mid-batch");
    await waitFor("part-1.txt", async () => existsSync(workspaceFile(name, "part-1.txt")));
    const { headers } = await lead();
    const shutdown = await api.requestShutdown(headers, name);
    const answered = await waitFor("an answer", async () => {
      const request = await api.getRequest(headers, String(shutdown.json.id));
      return request.json.status !== "pending" && request.json;
    });
    expect(answered).toMatchObject({
      status: "rejected",
      feedback: expect.stringMatching(/mid-write: batch 'pair' has 1 of 2 files written/),
    });
    expect((await agentRow(name)).status).not.toBe("shutdown");
    await api.sendMessage(headers, { to: name, content: "carry on" });
    await waitFor("part-2.txt", async () => existsSync(workspaceFile(name, "part-2.txt")));
  });

  it("shutdown timeout: the supervisor kills the worker and the status is shutdown (forced)", async () => {
    const name = await spawnScripted("test-slow-step");
    await waitFor("the slow step to start", () =>
      getDb().toolCall.findFirst({ where: { agent: { name }, tool: "bash", isAllowed: true } }),
    );
    const pid = supervisor.runningWorkers().find((worker) => worker.name === name)?.pid;
    expect(pid).toBeDefined();
    const shutdown = await api.requestShutdown((await lead()).headers, name, { timeoutSeconds: 5 });
    await waitFor("forced stop", async () => (await agentRow(name)).status === "shutdown", 20_000);
    expect(await agentRow(name)).toMatchObject({ isForcedStop: true });
    expect(
      (await api.getRequest((await lead()).headers, String(shutdown.json.id))).json.status,
    ).toBe("expired");
    await waitFor(
      "the process to be gone",
      async () => !supervisor.runningWorkers().some((worker) => worker.name === name),
    );
    expect(() => process.kill(pid ?? 0, 0)).toThrow();
  });

  it("kill -9 while waiting for approval: crashed, request orphaned; respawn gets a new incarnation and the old request can no longer be answered", async () => {
    const name = await spawnScripted("write-after-approval", { requirePlan: true });
    const plan = await pendingRequest(name, "plan_approval");
    const pid = supervisor.runningWorkers().find((worker) => worker.name === name)?.pid;
    process.kill(pid ?? 0, "SIGKILL");
    await waitFor("crashed", async () => (await agentRow(name)).status === "crashed");
    const { headers } = await lead();
    const detail = await api.getAgent(headers, name);
    expect(detail.json).toMatchObject({
      status: "crashed",
      pendingRequests: [expect.objectContaining({ id: plan.id })],
    });

    const respawn = await api.registerAgent(headers, {
      name,
      role: "tester",
      requirePlan: true,
      worker: { model: "scripted", script: "write-after-approval" },
    });
    expect(respawn.json).toMatchObject({ agent: { incarnation: 2 } });
    const late = await api.respond(headers, plan.id, {
      type: "plan_approval_response",
      approve: true,
    });
    expect(late.status).toBe(409);
    expect(late.json.error?.code).toBe("STALE_INCARNATION");
    // The new incarnation is running and asks afresh.
    const fresh = await pendingRequest(name, "plan_approval", plan.id);
    expect(fresh.incarnation).toBe(2);
  });

  it("a restarted supervisor starts its agents again as new incarnations and cancels the old incarnations' requests", async () => {
    const name = await spawnScripted("write-after-approval", { requirePlan: true });
    const plan = await pendingRequest(name, "plan_approval");
    await supervisor.stop();
    supervisor = await startSupervisor("supervisor-2");

    expect((await agentRow(name)).incarnation).toBe(2);
    expect((await getDb().request.findUniqueOrThrow({ where: { id: plan.id } })).status).toBe(
      "cancelled",
    );
    expect(supervisor.runningWorkers()).toContainEqual(
      expect.objectContaining({ name, incarnation: 2 }),
    );
    const fresh = await pendingRequest(name, "plan_approval", plan.id);
    expect(fresh.incarnation).toBe(2);
  });
});
