import { io as connect, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb, poolOf } from "../../lib/db";
import { takeNewRequestRow } from "../../lib/requests/new-rows";
import { findNewestEventId, listEventsAfter } from "../../lib/events/data";
import { broadcastHubEvents } from "../../lib/realtime/console-namespace";
import { EventHub } from "../../lib/realtime/event-hub";
import type {
  ClientToServerEvents,
  ConsoleEvent,
  RequestRowPayload,
  ServerToClientEvents,
} from "../../lib/shared/realtime/contract";
import { api, lead, registerAgent, submitPlan } from "../api/fixtures";
import { signedInHuman } from "../route-client";
import { startConsoleServer } from "../support/console-server";

type ConsoleClient = Socket<ServerToClientEvents, ClientToServerEvents>;
/** What one socket got, in order: events (with `rowFollows`) and rows. */
type Received =
  | { event: ConsoleEvent; rowFollows: boolean }
  | { requestId: string; row: RequestRowPayload["row"] };

let baseUrl: string;
let stopServer: () => Promise<void>;
let stopBroadcast: () => void;
const hub = new EventHub();
const sockets: ConsoleClient[] = [];

beforeAll(async () => {
  const server = await startConsoleServer();
  ({ baseUrl } = server);
  stopServer = server.stop;
  stopBroadcast = broadcastHubEvents(server.io, hub, getDb());
});

afterAll(async () => {
  for (const socket of sockets) socket.disconnect();
  stopBroadcast();
  await stopServer();
  await getDb().$disconnect();
});

async function openConsole(headers: Record<string, string>): Promise<Received[]> {
  const socket: ConsoleClient = connect(`${baseUrl}/console`, {
    transports: ["websocket"],
    extraHeaders: { origin: baseUrl, ...headers },
    reconnection: false,
  });
  sockets.push(socket);
  const received: Received[] = [];
  socket.on("event", (event, rowFollows) =>
    received.push({ event, rowFollows: rowFollows === true }),
  );
  socket.on("requestRow", (payload) => received.push(payload));
  await new Promise<void>((resolve, reject) => {
    socket.on("connect", resolve);
    socket.on("connect_error", reject);
  });
  return received;
}

/**
 * The first `request.created` event after `after` that `matches`, as the bridge would publish it.
 * Other test files write events meanwhile: the read pages on past theirs, and waits at a gap one
 * of their transactions leaves open until it commits.
 */
type CreatedEvent = Extract<ConsoleEvent, { kind: "request.created" }>;

async function createdEventAfter(
  after: number,
  matches: (event: CreatedEvent) => boolean,
  what: string,
): Promise<CreatedEvent> {
  let cursor = after;
  for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
    const events = await listEventsAfter(getDb(), cursor);
    const created = events.find(
      (event): event is CreatedEvent => event.kind === "request.created" && matches(event),
    );
    if (created) return created;
    cursor = events.at(-1)?.id ?? cursor;
    if (events.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no request.created for ${what}`);
}

/** A new plan for the Lead, and its `request.created` event as the bridge would publish it. */
async function newRequest(): Promise<{ id: string; agent: string; created: ConsoleEvent }> {
  const before = await findNewestEventId(getDb());
  const agent = await registerAgent();
  const response = await submitPlan(agent, "1. a plan only the API may show");
  const id = String(response.json.id);
  const created = await createdEventAfter(before, (event) => event.data.requestId === id, id);
  return { id, agent: agent.name, created };
}

/** The `request.created` event of the agent's request, once its statement has committed. */
async function committedRequestOf(
  agent: string,
  after: number,
): Promise<{ id: string; created: ConsoleEvent }> {
  const created = await createdEventAfter(after, (event) => event.data.agent === agent, agent);
  return { id: created.data.requestId, created };
}

async function waitFor(check: () => boolean): Promise<void> {
  for (let tries = 0; !check(); tries++) {
    if (tries > 200) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("a new request's row on the console socket (decision 035)", () => {
  it("follows the event to a Lead's socket as GET /requests/{id} shows it, and never to a viewer's", async () => {
    const leadSocket = await openConsole((await lead()).headers);
    const viewer = await signedInHuman("viewer");
    const viewerSocket = await openConsole(viewer.headers);
    const { id, created } = await newRequest();

    hub.publish([created]);
    await waitFor(() => leadSocket.length === 2 && viewerSocket.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 200));

    const asTheApiShowsIt = await api.getRequest((await lead()).headers, id);
    expect(asTheApiShowsIt.status).toBe(200);
    expect(leadSocket).toEqual([
      { event: created, rowFollows: true },
      { requestId: id, row: asTheApiShowsIt.json },
    ]);
    expect(viewerSocket).toEqual([{ event: created, rowFollows: false }]);
    expect(JSON.stringify(viewerSocket)).not.toContain("a plan only the API may show");
  });

  it("sends the event before the row is read: nothing live waits for it", async () => {
    const leadSocket = await openConsole((await lead()).headers);
    const { id, agent, created } = await newRequest();
    const next: ConsoleEvent = {
      ...created,
      id: created.id + 1,
      kind: "request.superseded",
      data: { requestId: id, agent, type: "plan_approval" },
    };

    hub.publish([created, next]);
    await waitFor(() => leadSocket.length === 3);

    expect(leadSocket.slice(0, 2)).toEqual([
      { event: created, rowFollows: true },
      { event: next, rowFollows: false },
    ]);
    expect(leadSocket[2]).toMatchObject({ requestId: id, row: { id } });
  });

  it("the node that created the request sends the row it wrote, without reading it back", async () => {
    const leadSocket = await openConsole((await lead()).headers);
    const { id, created } = await newRequest();
    const asCreated = await api.getRequest((await lead()).headers, id);
    // Changed behind the node's back: a row read now would show it.
    await getDb().$executeRaw`UPDATE requests SET feedback = 'changed after' WHERE id = ${id}`;

    hub.publish([created]);
    await waitFor(() => leadSocket.length === 2);
    expect(leadSocket[1]).toEqual({ requestId: id, row: asCreated.json });
  });

  it("a row whose event comes before its statement's answer waits for that answer, unread", async () => {
    const pool = poolOf(getDb());
    if (!pool) throw new Error("the tests' client runs on our pool");
    let releaseAnswer = () => undefined as void;
    const isAnswerHeld = new Promise<void>((resolve) => (releaseAnswer = resolve));
    const query = pool.query.bind(pool) as (config: unknown) => Promise<unknown>;
    // The common submission commits on its own: PostgreSQL tells the listener at commit, on
    // another connection, so the event may be published before the answer is read. Held here.
    const heldQuery = vi.spyOn(pool, "query").mockImplementation(((config: { name?: string }) =>
      config.name === "common-submissions"
        ? query(config).then(async (answer) => {
            await isAnswerHeld;
            return answer;
          })
        : query(config)) as typeof pool.query);
    try {
      const leadSocket = await openConsole((await lead()).headers);
      const before = await findNewestEventId(getDb());
      const agent = await registerAgent();
      const submitted = submitPlan(agent, "1. a plan committed before its answer is read");
      const { id, created } = await committedRequestOf(agent.name, before);
      // Changed behind the node's back: a row read now would show it.
      await getDb().$executeRaw`UPDATE requests SET feedback = 'changed after' WHERE id = ${id}`;

      hub.publish([created]);
      await waitFor(() => leadSocket.length > 0);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(leadSocket).toEqual([{ event: created, rowFollows: true }]);

      releaseAnswer();
      const response = await submitted;
      expect(response.status).toBe(201);
      await waitFor(() => leadSocket.length === 2);
      expect(leadSocket[1]).toEqual({ requestId: id, row: response.json });
      expect(response.json).toMatchObject({ feedback: null });
    } finally {
      releaseAnswer();
      heldQuery.mockRestore();
    }
  });

  it("a request another node created is read, and a gate's card is sent as the API shows it", async () => {
    const leadSocket = await openConsole((await lead()).headers);
    const { id, created } = await newRequest();
    // What another node holds of this request: nothing.
    expect(await takeNewRequestRow(id)).toMatchObject({ id });
    await getDb().$executeRaw`UPDATE requests SET feedback = 'changed after' WHERE id = ${id}`;
    hub.publish([created]);
    await waitFor(() => leadSocket.length === 2);
    expect(leadSocket[1]).toMatchObject({ requestId: id, row: { id, feedback: "changed after" } });

    const before = await findNewestEventId(getDb());
    const agent = await registerAgent();
    const verdict = await api.toolCall(agent.headers, {
      tool: "bash",
      args: { command: "rm -rf build" },
    });
    const cardId = String(verdict.json.requestId);
    const card = (await listEventsAfter(getDb(), before)).find(
      (event) => event.kind === "request.created" && event.data.requestId === cardId,
    );
    if (!card) throw new Error(`no request.created for ${cardId}`);
    hub.publish([card]);
    await waitFor(() => leadSocket.length === 4);
    const asTheApiShowsIt = await api.getRequest((await lead()).headers, cardId);
    expect(leadSocket[3]).toEqual({ requestId: cardId, row: asTheApiShowsIt.json });
  });

  it("announces no row for a request to an agent, nor for an event replayed on resume", async () => {
    const leadSocket = await openConsole((await lead()).headers);
    const { created } = await newRequest();
    const toAgent = { ...created, data: { ...created.data, target: "agent-x" } } as ConsoleEvent;
    hub.publish([toAgent]);
    await waitFor(() => leadSocket.length === 1);

    const replayed = await openConsole((await lead()).headers);
    sockets.at(-1)?.emit("resume", { after: created.id - 1 });
    await waitFor(() => replayed.some((item) => "event" in item && item.event.id === created.id));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(leadSocket).toEqual([{ event: toAgent, rowFollows: false }]);
    expect(replayed.filter((item) => "requestId" in item || item.rowFollows)).toEqual([]);
  });
});
