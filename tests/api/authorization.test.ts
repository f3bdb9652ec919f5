import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { signedInHuman } from "../route-client";
import {
  api,
  createTask,
  lead,
  registerAgent,
  submitPlan,
  uniqueName,
  type ApiResponse,
  type TestAgent,
} from "./fixtures";

afterAll(() => getDb().$disconnect());

type ActorName = "anonymous" | "viewer" | "agent" | "other agent" | "lead";
type Headers = Record<string, string>;
type Expectation = "ok" | "forbidden";
type Route = {
  route: string;
  call: (headers: Headers, context: Context) => Promise<ApiResponse>;
  allowed: ActorName[];
};
type Context = { agent: TestAgent; other: TestAgent; planId: string; taskId: string };

// Lead last, so a Lead action that consumes state (a decision) does not mask another actor's refusal.
const ACTORS: ActorName[] = ["anonymous", "viewer", "agent", "other agent", "lead"];
const HUMANS: ActorName[] = ["viewer", "lead"];
const AGENTS: ActorName[] = ["agent", "other agent"];

const ROUTES: Route[] = [
  {
    route: "POST /agents",
    allowed: ["lead"],
    call: (h) => api.registerAgent(h, { name: uniqueName("m"), role: "x" }),
  },
  { route: "GET /agents", allowed: HUMANS, call: (h) => api.listAgents(h) },
  { route: "GET /agents/{name}", allowed: HUMANS, call: (h, c) => api.getAgent(h, c.agent.name) },
  {
    route: "GET /agents/{name}/timeline",
    allowed: HUMANS,
    call: (h, c) => api.timeline(h, c.agent.name),
  },
  {
    route: "POST /agents/{name}/plan-requirement",
    allowed: ["lead"],
    call: (h, c) => api.requirePlan(h, c.agent.name),
  },
  {
    route: "POST /agents/{name}/shutdown",
    allowed: ["lead"],
    call: (h, c) => api.requestShutdown(h, c.agent.name),
  },
  {
    route: "POST /agents/{name}/force-stop",
    allowed: ["lead"],
    call: (h, c) => api.forceStop(h, c.other.name),
  },
  {
    route: "POST /agents/{name}/respawn",
    allowed: ["lead"],
    call: (h, c) => api.respawn(h, c.other.name),
  },
  {
    route: "POST /agents/{name}/worker-token",
    allowed: ["lead"],
    call: (h, c) => api.workerToken(h, c.other.name),
  },
  {
    route: "POST /agents/{name}/exit",
    allowed: ["lead"],
    call: (h, c) => api.reportExit(h, c.other.name, { incarnation: 99, exitCode: 0, signal: null }),
  },
  {
    route: "POST /requests",
    allowed: AGENTS,
    call: (h) => api.submitRequest(h, { type: "shutdown", payload: {} }),
  },
  { route: "GET /requests", allowed: HUMANS, call: (h) => api.listRequests(h) },
  {
    route: "GET /requests/{id}",
    allowed: [...HUMANS, "agent"],
    call: (h, c) => api.getRequest(h, c.planId),
  },
  {
    route: "POST /requests/{id}/responses",
    allowed: ["lead"],
    call: (h, c) => api.respond(h, c.planId, { type: "plan_approval_response", approve: true }),
  },
  { route: "GET /inbox", allowed: AGENTS, call: (h) => api.inbox(h) },
  { route: "POST /inbox/ack", allowed: AGENTS, call: (h) => api.ack(h, 0) },
  {
    route: "POST /messages",
    allowed: ["lead", ...AGENTS],
    call: (h) => api.sendMessage(h, { to: "lead", content: "hi" }),
  },
  {
    route: "POST /tool-calls",
    allowed: AGENTS,
    call: (h) => api.toolCall(h, { tool: "read_file", args: { path: "a" } }),
  },
  {
    route: "POST /heartbeat",
    allowed: AGENTS,
    call: (h) => api.heartbeat(h, { status: "working" }),
  },
  { route: "GET /me", allowed: AGENTS, call: (h) => api.me(h) },
  { route: "POST /tasks", allowed: ["lead"], call: (h) => api.createTask(h, { title: "t" }) },
  { route: "GET /tasks", allowed: [...HUMANS, ...AGENTS], call: (h) => api.listTasks(h) },
  { route: "POST /tasks/{id}/claim", allowed: AGENTS, call: (h, c) => api.claimTask(h, c.taskId) },
  {
    route: "POST /users",
    allowed: ["lead"],
    call: (h) =>
      api.createUser(h, {
        email: `${uniqueName("u")}@example.com`,
        password: "long-enough-pass",
        role: "viewer",
      }),
  },
  { route: "GET /events", allowed: HUMANS, call: (h) => api.events(h) },
  {
    route: "POST /tokens",
    allowed: HUMANS,
    call: (h) => api.createToken(h, { name: uniqueName("t"), scope: "read" }),
  },
  { route: "GET /tokens", allowed: HUMANS, call: (h) => api.listTokens(h) },
  {
    route: "DELETE /tokens/{id}",
    allowed: HUMANS,
    call: (h) => api.revokeToken(h, "00000000-0000-4000-8000-000000000000"),
  },
];

let headersOf: Record<ActorName, Headers>;

beforeAll(async () => {
  headersOf = {
    anonymous: {},
    viewer: (await signedInHuman("viewer")).headers,
    lead: (await lead()).headers,
    agent: {},
    "other agent": {},
  };
});

async function freshContext(): Promise<Context> {
  const agent = await registerAgent();
  const other = await registerAgent();
  headersOf.agent = agent.headers;
  headersOf["other agent"] = other.headers;
  const planId = String((await submitPlan(agent)).json.id);
  return { agent, other, planId, taskId: await createTask() };
}

describe("authorization matrix: every route × {anonymous, viewer, lead, agent, other agent}", () => {
  it.each(ROUTES.map((route) => [route.route, route] as const))("%s", async (_name, route) => {
    const context = await freshContext();
    const outcomes: string[] = [];
    for (const actor of ACTORS) {
      const { status, json } = await route.call(headersOf[actor], context);
      const expected: Expectation | "unauthenticated" =
        actor === "anonymous"
          ? "unauthenticated"
          : route.allowed.includes(actor)
            ? "ok"
            : "forbidden";
      const actual =
        status === 401
          ? "unauthenticated"
          : status === 403
            ? "forbidden"
            : status < 500
              ? "ok"
              : `error ${status}`;
      outcomes.push(
        `${actor}: ${actual}${actual === expected ? "" : ` (expected ${expected}; ${JSON.stringify(json.error ?? json)})`}`,
      );
      expect(status).toBeLessThan(500);
    }
    expect(outcomes.filter((line) => line.includes("expected"))).toEqual([]);
  });

  it("agent A can never read B's requests, answer B's requests or act as the Lead", async () => {
    const context = await freshContext();
    expect((await api.getRequest(context.other.headers, context.planId)).status).toBe(403);
    const bobShutdown = await api.requestShutdown(headersOf.lead, context.other.name);
    const answered = await api.respond(context.agent.headers, String(bobShutdown.json.id), {
      type: "shutdown_response",
      approve: true,
    });
    expect(answered.json.error?.code).toBe("NOT_TARGET");
    expect((await api.requestShutdown(context.agent.headers, context.other.name)).status).toBe(403);
    expect((await api.getRequest(headersOf.lead, String(bobShutdown.json.id))).json.status).toBe(
      "pending",
    );
  });
});
