import { io as connect, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { listEventsAfter } from "../../lib/events/data";
import { broadcastHubEvents } from "../../lib/realtime/console-namespace";
import { EventHub } from "../../lib/realtime/event-hub";
import type {
  ClientToServerEvents,
  ConsoleEvent,
  RequestRow,
  ServerToClientEvents,
} from "../../lib/shared/realtime/contract";
import { api, lead, registerAgent, submitPlan } from "../api/fixtures";
import { signedInHuman } from "../route-client";
import { startConsoleServer } from "../support/console-server";

type ConsoleClient = Socket<ServerToClientEvents, ClientToServerEvents>;
type Received = { event: ConsoleEvent; row: RequestRow | undefined };

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
  socket.on("event", (event, row) => received.push({ event, row }));
  await new Promise<void>((resolve, reject) => {
    socket.on("connect", resolve);
    socket.on("connect_error", reject);
  });
  return received;
}

/** A new plan for the Lead, and its `request.created` event as the bridge would publish it. */
async function newRequest(): Promise<{ id: string; agent: string; created: ConsoleEvent }> {
  const before = hub.lastId;
  const agent = await registerAgent();
  const response = await submitPlan(agent, "1. a plan only the API may show");
  const id = String(response.json.id);
  const events = await listEventsAfter(getDb(), before);
  const created = events.find(
    (event) => event.kind === "request.created" && event.data.requestId === id,
  );
  if (!created) throw new Error(`no request.created for ${id}`);
  return { id, agent: agent.name, created };
}

async function waitFor(check: () => boolean): Promise<void> {
  for (let tries = 0; !check(); tries++) {
    if (tries > 200) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("a new request's row on the console socket (decision 035)", () => {
  it("goes to a Lead's socket as GET /requests/{id} shows it, and never to a viewer's", async () => {
    const leadSocket = await openConsole((await lead()).headers);
    const viewer = await signedInHuman("viewer");
    const viewerSocket = await openConsole(viewer.headers);
    const { id, created } = await newRequest();

    hub.publish([created]);
    await waitFor(() => leadSocket.length > 0 && viewerSocket.length > 0);

    const asTheApiShowsIt = await api.getRequest((await lead()).headers, id);
    expect(leadSocket).toEqual([{ event: created, row: asTheApiShowsIt.json }]);
    expect(viewerSocket).toEqual([{ event: created, row: undefined }]);
    expect(JSON.stringify(viewerSocket)).not.toContain("a plan only the API may show");
  });

  it("sends no event after a new request before that request's row", async () => {
    const leadSocket = await openConsole((await lead()).headers);
    const { id, agent, created } = await newRequest();
    const next: ConsoleEvent = {
      ...created,
      id: created.id + 1,
      kind: "request.superseded",
      data: { requestId: id, agent, type: "plan_approval" },
    };

    hub.publish([created, next]);
    await waitFor(() => leadSocket.length === 2);

    expect(leadSocket.map(({ event, row }) => [event.kind, row?.id])).toEqual([
      ["request.created", id],
      ["request.superseded", undefined],
    ]);
  });

  it("leaves the row out for a request to an agent and for an event replayed on resume", async () => {
    const leadSocket = await openConsole((await lead()).headers);
    const { created } = await newRequest();
    const toAgent = { ...created, data: { ...created.data, target: "agent-x" } } as ConsoleEvent;
    hub.publish([toAgent]);
    await waitFor(() => leadSocket.length === 1);
    expect(leadSocket[0]?.row).toBeUndefined();

    const replayed = await openConsole((await lead()).headers);
    sockets.at(-1)?.emit("resume", { after: created.id - 1 });
    await waitFor(() => replayed.some(({ event }) => event.id === created.id));
    expect(replayed.find(({ event }) => event.id === created.id)?.row).toBeUndefined();
  });
});
