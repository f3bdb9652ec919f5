import { io as connect, type Socket } from "socket.io-client";
import { afterAll, describe, expect, it, vi } from "vitest";
import { newRequestId } from "../../lib/requests/request-id";
import type {
  ClientToServerEvents,
  PresencePayload,
  ServerToClientEvents,
} from "../../lib/shared/realtime/contract";
import { CONSOLE_NAMESPACE } from "../../lib/shared/realtime/contract";
import type { ApiNode } from "../support/api-node";
import { readDatabaseNowMs } from "../support/database-now";
import { createHuman, signIn, sleep } from "../support/reliability";
import { callNode, runTwoNodesDuringFile } from "../support/two-nodes-hooks";

// Two web nodes whose clocks are wrong, as a node's is when its NTP fails: A runs 20 minutes
// behind, B 20 minutes ahead, each sweeping every second. Each judgement of a time must be the
// database's (decision 083): A once stamped deadlines 20 minutes in the past, which the
// database's trigger then enforced, and B expired A's requests, marked live agents offline and
// ignored a deny rule still in force.

const SKEW_MS = 20 * 60_000;
const nodes = runTwoNodesDuringFile("handshake_node_clocks", {
  clockSkewMs: { a: -SKEW_MS, b: SKEW_MS },
});

/** Long enough for each node's sweeper (every second) to have run at least twice. */
const SWEEPS_MS = 2_500;

const sockets: Socket<ServerToClientEvents, ClientToServerEvents>[] = [];
afterAll(() => {
  for (const socket of sockets) socket.disconnect();
});

/** A Lead's console on `node`, with every presence and clock reading it is told of. */
async function openConsole(node: ApiNode) {
  const session = await signIn(node.url, await createHuman(nodes.db, "lead"));
  const socket: Socket<ServerToClientEvents, ClientToServerEvents> = connect(
    `${node.url}${CONSOLE_NAMESPACE}`,
    {
      transports: ["websocket"],
      extraHeaders: { cookie: session.cookie, origin: node.url },
      auth: { sessionKey: session.sessionKey },
      reconnection: false,
    },
  );
  sockets.push(socket);
  const presences: PresencePayload[] = [];
  socket.on("presence", (payload) => presences.push(payload));
  const clocks: number[] = [];
  socket.on("clock", ({ now }) => clocks.push(now));
  await new Promise<void>((resolve, reject) => {
    socket.on("connect", resolve);
    socket.on("connect_error", reject);
  });
  return { socket, presences, clocks };
}

function databaseNowMs(): Promise<number> {
  return readDatabaseNowMs(nodes.db);
}

async function registerAgent(name: string): Promise<string> {
  const registered = await callNode(nodes.a, "POST", "/api/v1/agents", nodes.leadToken, {
    name,
    role: "tester",
  });
  expect(registered.status).toBe(201);
  return String(registered.json.token);
}

/** Within a few seconds of the database's clock `offsetMs` from now. */
async function expectDatabaseTime(iso: unknown, offsetMs: number): Promise<void> {
  const error = Date.parse(String(iso)) - ((await databaseNowMs()) + offsetMs);
  expect(Math.abs(error), `${String(iso)} is ${error} ms off the database's clock`).toBeLessThan(
    5_000,
  );
}

describe("web nodes whose clocks are off", () => {
  it("a plan and a question asked through a node behind keep their whole time, and are decided through a node ahead", async () => {
    const agentToken = await registerAgent("clock-asker");
    const plan = await callNode(nodes.a, "POST", "/api/v1/requests", agentToken, {
      type: "plan_approval",
      payload: { plan: "read the notes, then write a summary" },
      timeoutSeconds: 120,
    });
    expect(plan.status, JSON.stringify(plan.json)).toBe(201);
    const question = await callNode(nodes.a, "POST", "/api/v1/requests", agentToken, {
      type: "question",
      payload: {
        question: "Which branch?",
        options: [
          { id: "main", label: "main" },
          { id: "next", label: "next" },
        ],
        default: "main",
      },
      timeoutSeconds: 120,
    });
    expect(question.status, JSON.stringify(question.json)).toBe(201);
    for (const { json } of [plan, question]) {
      await expectDatabaseTime(json.createdAt, 0);
      await expectDatabaseTime(json.expiresAt, 120_000);
    }

    await sleep(SWEEPS_MS);
    const approved = await callNode(
      nodes.b,
      "POST",
      `/api/v1/requests/${String(plan.json.id)}/responses`,
      nodes.leadToken,
      { type: "plan_approval_response", approve: true },
    );
    expect(approved.status, JSON.stringify(approved.json)).toBe(200);
    expect(approved.json.status).toBe("approved");
    const extended = await callNode(
      nodes.b,
      "POST",
      `/api/v1/requests/${String(question.json.id)}/deadline`,
      nodes.leadToken,
      { extendSeconds: 60 },
    );
    expect(extended.status, JSON.stringify(extended.json)).toBe(200);
    await expectDatabaseTime(extended.json.expiresAt, 180_000 - SWEEPS_MS);
  });

  it("a Lead added through a node behind is as new as the database says", async () => {
    // The two-person rule refuses a second approval from an account made after the request:
    // stamped by a node 20 minutes behind, a new Lead's account looked older than every request
    // of the last 20 minutes.
    const added = await callNode(nodes.a, "POST", "/api/v1/users", nodes.leadToken, {
      email: "clock-lead@example.com",
      password: "a long enough password",
      role: "lead",
    });
    expect(added.status, JSON.stringify(added.json)).toBe(201);
    await expectDatabaseTime(added.json.createdAt, 0);
  });

  it("an agent heard from through a node behind is not marked offline by a node ahead", async () => {
    const agentToken = await registerAgent("clock-heartbeat");
    const heartbeat = await callNode(nodes.a, "POST", "/api/v1/heartbeat", agentToken, {
      status: "working",
    });
    expect(heartbeat.status, JSON.stringify(heartbeat.json)).toBe(200);
    await sleep(SWEEPS_MS);
    const agent = await nodes.db.agent.findUniqueOrThrow({ where: { name: "clock-heartbeat" } });
    expect(agent.status).toBe("working");
    await expectDatabaseTime(agent.lastHeartbeatAt?.toISOString(), -SWEEPS_MS);
  });

  it("a deny rule still in force is obeyed by a node ahead", async () => {
    const agentToken = await registerAgent("clock-denied");
    const read = { tool: "read_file", args: { path: "notes.txt" } };
    expect(
      (await callNode(nodes.b, "POST", "/api/v1/tool-calls", agentToken, read)).json,
    ).toMatchObject({ allowed: true });
    const rule = await callNode(nodes.a, "POST", "/api/v1/rules", nodes.leadToken, {
      pattern: "read_file",
      effect: "deny",
      scope: { kind: "agent", agent: "clock-denied" },
      expiresAt: new Date((await databaseNowMs()) + 10 * 60_000).toISOString(),
    });
    expect(rule.status, JSON.stringify(rule.json)).toBe(201);
    const denied = await callNode(nodes.b, "POST", "/api/v1/tool-calls", agentToken, read);
    expect(denied.json).toMatchObject({ allowed: false, code: "RULE_DENIED" });
  });

  it("a Lead on a node behind sees who has a card open on a node ahead", async () => {
    // Presence announcements are signed with the time they were sent and dropped 20 s on, so
    // a recorded one cannot be played back; the receiving node judges that age.
    const onA = await openConsole(nodes.a);
    const onB = await openConsole(nodes.b);
    const card = newRequestId();
    onB.socket.emit("viewing", { requestId: card });
    await vi.waitFor(
      () => expect(onA.presences.filter((payload) => payload.requestId === card)).not.toEqual([]),
      { timeout: 5_000, interval: 50 },
    );
  });

  it("a console on either node is told the database's time, which it counts down by", async () => {
    for (const node of [nodes.a, nodes.b]) {
      const { clocks } = await openConsole(node);
      await vi.waitFor(() => expect(clocks).toHaveLength(1), { timeout: 5_000, interval: 20 });
      await expectDatabaseTime(new Date(clocks[0] ?? Number.NaN).toISOString(), 0);
    }
  });
});
