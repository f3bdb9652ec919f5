import { startConsoleServer } from "../support/console-server";
import { randomBytes } from "node:crypto";
import { io as connect, type Socket } from "socket.io-client";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { signedInHuman } from "../route-client";
import { getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import type { Db } from "../../lib/db";
import { broadcastHubEvents, type ConsoleServer } from "../../lib/realtime/console-namespace";
import type {
  ClientToServerEvents,
  ConsoleEvent,
  ServerToClientEvents,
} from "../../lib/shared/realtime/contract";
import {
  LISTENER_APPLICATION_NAME,
  startEventBridge,
  type EventBridge,
} from "../../lib/realtime/event-bridge";
import { EventHub } from "../../lib/realtime/event-hub";

type ConsoleClient = Socket<ServerToClientEvents, ClientToServerEvents>;

/** Inserts one event now (in `db`'s transaction, if it is one) and returns its id. */
async function appendEvent(db: Db, kind: string, subject: string, data: object): Promise<number> {
  const event = await db.event.create({ data: { kind, subject, data }, select: { id: true } });
  return Number(event.id);
}

/**
 * This file's listeners, named apart from those other test files' nodes keep on the same
 * database: counting or killing a stranger's listener made the tests race each other.
 */
const OWN_LISTENERS = `${LISTENER_APPLICATION_NAME}-${randomBytes(4).toString("hex")}`;

// Short intervals keep outages brief; assertions on time stay loose.
const FAST = {
  pollIntervalMs: 200,
  healthCheckIntervalMs: 200,
  reconnectDelayMs: 50,
  applicationName: OWN_LISTENERS,
};

const bridges: EventBridge[] = [];
const sockets: ConsoleClient[] = [];
let io: ConsoleServer;
let baseUrl: string;
let unsubscribeBroadcast: (() => void) | undefined;

beforeAll(async () => {
  ({ io, baseUrl } = await startConsoleServer());
});

afterEach(async () => {
  unsubscribeBroadcast?.();
  unsubscribeBroadcast = undefined;
  for (const socket of sockets.splice(0)) socket.disconnect();
  await Promise.all(bridges.splice(0).map((bridge) => bridge.stop()));
});

afterAll(async () => {
  await io.close();
  await getDb().$disconnect();
});

async function startBridge(hub: EventHub): Promise<EventBridge> {
  const bridge = await startEventBridge({
    databaseUrl: requireDatabaseUrl(),
    db: getDb(),
    hub,
    ...FAST,
  });
  bridges.push(bridge);
  return bridge;
}

function uniqueSubject(label: string): string {
  return `test:${label}-${randomBytes(4).toString("hex")}`;
}

/** Records what reaches a hub for one subject, with arrival times. */
function recordSubject(hub: EventHub, subject: string) {
  const received: { id: number; at: number }[] = [];
  const allIds: number[] = [];
  hub.subscribe((event) => {
    allIds.push(event.id);
    if (event.subject === subject) received.push({ id: event.id, at: performance.now() });
  });
  return { received, ids: () => received.map((entry) => entry.id), allIds };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}

async function listenerPids(): Promise<number[]> {
  const rows = await getDb().$queryRaw<{ pid: number }[]>`
    SELECT pid FROM pg_stat_activity
    WHERE application_name = ${OWN_LISTENERS} AND datname = current_database()`;
  return rows.map((row) => row.pid);
}

async function killListener(): Promise<number[]> {
  const rows = await getDb().$queryRaw<{ pid: number; isTerminated: boolean }[]>`
    SELECT pid, pg_terminate_backend(pid) AS "isTerminated" FROM pg_stat_activity
    WHERE application_name = ${OWN_LISTENERS} AND datname = current_database()`;
  expect(rows.every((row) => row.isTerminated)).toBe(true);
  return rows.map((row) => row.pid);
}

/**
 * Inserts `count` events one after another, killing the listener's backend after `killAfter` of
 * them. Returns the ids with their commit times and the moment of the kill.
 */
async function insertThroughListenerKill(subject: string, count: number, killAfter: number) {
  const inserted: { id: number; at: number }[] = [];
  let killedAt = 0;
  let killedPids: number[] = [];
  for (let i = 0; i < count; i++) {
    if (i === killAfter) {
      killedPids = await killListener();
      killedAt = performance.now();
    }
    const id = await appendEvent(getDb(), "message.sent", subject, { i });
    inserted.push({ id, at: performance.now() });
    await sleep(15);
  }
  return { inserted, killedAt, killedPids };
}

/** A transaction that appends an event and stays open until told to commit or roll back. */
function openEventTransaction(subject: string) {
  let reportId!: (id: number) => void;
  const id = new Promise<number>((resolve) => (reportId = resolve));
  let end!: (isCommitted: boolean) => void;
  const ended = new Promise<boolean>((resolve) => (end = resolve));
  const settled = getDb().$transaction(
    async (tx) => {
      reportId(await appendEvent(tx, "message.sent", subject, { isHeldOpen: true }));
      if (!(await ended)) throw new Error("rolled back on purpose");
    },
    { timeout: 10_000 },
  );
  return { id, settled, commit: () => end(true), rollBack: () => end(false) };
}

function openConsole(headers: Record<string, string>) {
  const socket: ConsoleClient = connect(`${baseUrl}/console`, {
    transports: ["websocket"],
    extraHeaders: { origin: baseUrl, ...headers },
    reconnection: false,
  });
  sockets.push(socket);
  const received: ConsoleEvent[] = [];
  socket.on("event", (event) => received.push(event));
  const connected = new Promise<void>((resolve) => socket.on("connect", resolve));
  return { socket, received, connected };
}

describe("event bridge", () => {
  it("publishes events committed after start, in order, without replaying history", async () => {
    const subject = uniqueSubject("live");
    const before = await appendEvent(getDb(), "message.sent", subject, { i: -1 });
    const hub = new EventHub();
    const bridge = await startBridge(hub);
    expect(bridge.lastId).toBeGreaterThanOrEqual(before);
    expect(bridge.isListening()).toBe(true);
    const record = recordSubject(hub, subject);

    const ids: number[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(await appendEvent(getDb(), "message.sent", subject, { i }));

    await waitUntil(() => record.received.length >= ids.length, 5_000);
    expect(record.ids()).toEqual(ids);
    expect(bridge.lastId).toBeGreaterThanOrEqual(ids.at(-1) ?? 0);
  });

  it("loses and duplicates nothing when the LISTEN connection is killed mid-stream", async () => {
    const subject = uniqueSubject("kill");
    const hub = new EventHub();
    const bridge = await startBridge(hub);
    const record = recordSubject(hub, subject);
    const [originalPid] = await listenerPids();
    const newListenerSeenAt = waitUntil(async () =>
      (await listenerPids()).some((pid) => pid !== originalPid),
    ).then(() => performance.now());

    const { inserted, killedAt, killedPids } = await insertThroughListenerKill(subject, 60, 15);
    expect(killedPids).toEqual([originalPid]);
    const reconnectMs = (await newListenerSeenAt) - killedAt;
    await waitUntil(() => record.received.length >= inserted.length);
    await sleep(300);

    expect(record.ids()).toEqual(inserted.map((entry) => entry.id));
    const { allIds } = record;
    expect(allIds.every((id, index) => index === 0 || id > (allIds[index - 1] ?? 0))).toBe(true);
    expect(bridge.isListening()).toBe(true);
    const worstLatencyMs = Math.max(
      ...inserted.map((entry, index) => (record.received[index]?.at ?? Infinity) - entry.at),
    );
    console.log(
      `[event-bridge] ${inserted.length} events across a listener kill: 0 lost, 0 duplicated; ` +
        `new listener ${reconnectMs.toFixed(0)} ms after the kill; ` +
        `worst commit-to-hub latency ${worstLatencyMs.toFixed(0)} ms`,
    );
    expect(reconnectMs).toBeLessThan(5_000);
    expect(worstLatencyMs).toBeLessThan(5_000);
  });

  it("publishes a lower id that commits after a higher one, in order", async () => {
    const subject = uniqueSubject("late");
    const hub = new EventHub();
    await startBridge(hub);
    const record = recordSubject(hub, subject);

    const late = openEventTransaction(subject);
    const lowId = await late.id;
    const highId = await appendEvent(getDb(), "message.sent", subject, { isHeldOpen: false });
    expect(highId).toBeGreaterThan(lowId);
    await sleep(300);
    expect(record.ids()).toEqual([]);

    late.commit();
    await late.settled;
    await waitUntil(() => record.received.length >= 2, 5_000);
    expect(record.ids()).toEqual([lowId, highId]);
  });

  it("stops waiting for the id of a rolled-back transaction", async () => {
    const subject = uniqueSubject("rollback");
    const hub = new EventHub();
    await startBridge(hub);
    const record = recordSubject(hub, subject);

    const abandoned = openEventTransaction(subject);
    const skippedId = await abandoned.id;
    const keptId = await appendEvent(getDb(), "message.sent", subject, { isHeldOpen: false });
    abandoned.rollBack();
    await expect(abandoned.settled).rejects.toThrow("rolled back on purpose");

    await waitUntil(() => record.received.length >= 1, 5_000);
    await sleep(300);
    expect(record.ids()).toEqual([keptId]);
    expect(keptId).toBeGreaterThan(skippedId);
  });

  it("falls back to polling while it cannot LISTEN", async () => {
    const subject = uniqueSubject("poll");
    const hub = new EventHub();
    const unreachable = new URL(requireDatabaseUrl());
    unreachable.port = "1";
    const bridge = await startEventBridge({
      databaseUrl: unreachable.toString(),
      db: getDb(),
      hub,
      ...FAST,
    });
    bridges.push(bridge);
    expect(bridge.isListening()).toBe(false);
    const record = recordSubject(hub, subject);

    const ids: number[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(await appendEvent(getDb(), "message.sent", subject, { i }));
    await waitUntil(() => record.received.length >= ids.length, 5_000);
    expect(record.ids()).toEqual(ids);
  });

  it("leaves no listener backend behind after stop()", async () => {
    const bridge = await startBridge(new EventHub());
    expect(await listenerPids()).toHaveLength(1);
    await bridge.stop();
    expect(bridge.isListening()).toBe(false);
    await waitUntil(async () => (await listenerPids()).length === 0, 5_000);
  });
});

describe("event bridge, caught up or not (decision 065)", () => {
  let probes = 0;
  /** Whether the hub trusts an inbox marked quiet now: only while its bridge is caught up. */
  function trustsQuietInboxes(hub: EventHub): boolean {
    const key = `inbox:probe-${(probes += 1)}`;
    const owner = { agentId: "probe", incarnation: 1 };
    hub.wakeWaitsFor({
      kind: "message.sent",
      subject: key,
      at: new Date().toISOString(),
      data: { messageId: 1, from: "lead", to: `probe-${probes}`, type: "message" },
    });
    hub.markInboxAnswered(key, owner, 1);
    return hub.takeQuietInbox(key, owner, 1n);
  }

  it("is not caught up while it holds an event back behind an open transaction", async () => {
    const subject = uniqueSubject("held");
    const hub = new EventHub();
    await startBridge(hub);
    await waitUntil(() => trustsQuietInboxes(hub), 5_000);

    const open = openEventTransaction(subject);
    await open.id;
    await appendEvent(getDb(), "message.sent", subject, { isHeldOpen: false });
    await sleep(200);
    expect(trustsQuietInboxes(hub)).toBe(false);

    open.commit();
    await open.settled;
    await waitUntil(() => trustsQuietInboxes(hub), 5_000);
  });

  it("is not caught up while its LISTEN connection is lost, nor before it ever listened, nor once stopped", async () => {
    const hub = new EventHub();
    const bridge = await startEventBridge({
      databaseUrl: requireDatabaseUrl(),
      db: getDb(),
      hub,
      ...FAST,
      reconnectDelayMs: 60_000,
    });
    bridges.push(bridge);
    await waitUntil(() => trustsQuietInboxes(hub), 5_000);
    await killListener();
    await waitUntil(() => !bridge.isListening(), 5_000);
    expect(trustsQuietInboxes(hub)).toBe(false);

    const unreachable = new URL(requireDatabaseUrl());
    unreachable.port = "1";
    const neverListening = new EventHub();
    bridges.push(
      await startEventBridge({
        databaseUrl: unreachable.toString(),
        db: getDb(),
        hub: neverListening,
        ...FAST,
      }),
    );
    await sleep(300);
    expect(trustsQuietInboxes(neverListening)).toBe(false);

    const stopped = new EventHub();
    const stoppedBridge = await startBridge(stopped);
    await waitUntil(() => trustsQuietInboxes(stopped), 5_000);
    await stoppedBridge.stop();
    expect(trustsQuietInboxes(stopped)).toBe(false);
  });
});

describe("/console live events", () => {
  it("loses none for a connected client when the LISTEN connection is killed", async () => {
    const subject = uniqueSubject("socket-kill");
    const hub = new EventHub();
    const bridge = await startBridge(hub);
    unsubscribeBroadcast = broadcastHubEvents(io, hub, getDb());
    const lead = await signedInHuman("viewer");
    const { socket, received, connected } = openConsole(lead.headers);
    await connected;
    const resumed = new Promise((resolve) => socket.on("resumed", resolve));
    socket.emit("resume", { after: bridge.lastId });
    await resumed;

    const { inserted } = await insertThroughListenerKill(subject, 40, 10);
    const idsOfSubject = () =>
      received.filter((event) => event.subject === subject).map((event) => event.id);
    await waitUntil(() => idsOfSubject().length >= inserted.length);
    await sleep(300);
    expect(idsOfSubject()).toEqual(inserted.map((entry) => entry.id));
  });

  it("answers a resume from below a live event it already sent as truncated: the console refetches", async () => {
    // Red team, round nine: live events reach a socket from its connection on, and a console
    // drops what comes below the highest id it has seen. A live event that beat the resume hid
    // the replayed request.created beneath it, and nothing refetched the inbox.
    const subject = uniqueSubject("beaten");
    const hub = new EventHub();
    const bridge = await startBridge(hub);
    unsubscribeBroadcast = broadcastHubEvents(io, hub, getDb());
    const viewer = await signedInHuman("viewer");
    const after = bridge.lastId;
    await appendEvent(getDb(), "test.missed", subject, {});
    const beaten = openConsole(viewer.headers);
    await beaten.connected;
    const live = await appendEvent(getDb(), "test.live", subject, {});
    await waitUntil(() => beaten.received.some((event) => event.id === live));
    const truncated = new Promise((resolve) => beaten.socket.on("resumed", resolve));
    beaten.socket.emit("resume", { after });
    expect(await truncated).toMatchObject({ isTruncated: true });
    // Nothing sent live past its cursor yet: the replay is all the console needs.
    const quiet = openConsole(viewer.headers);
    await quiet.connected;
    const replayed = new Promise((resolve) => quiet.socket.on("resumed", resolve));
    quiet.socket.emit("resume", { after: live });
    expect(await replayed).toMatchObject({ isTruncated: false });
  });

  it("encodes a live event once for all consoles, and each console gets it once", async () => {
    const subject = uniqueSubject("broadcast");
    const hub = new EventHub();
    unsubscribeBroadcast = broadcastHubEvents(io, hub, getDb());
    const consoles: ReturnType<typeof openConsole>[] = [];
    for (let i = 0; i < 3; i++) {
      const lead = await signedInHuman("viewer");
      const opened = openConsole(lead.headers);
      await opened.connected;
      consoles.push(opened);
    }
    const encode = vi.spyOn(io.encoder, "encode");
    try {
      const firstId = 2 ** 40 + Math.floor(Math.random() * 2 ** 30);
      const published: ConsoleEvent[] = [0, 1, 2].map((offset) => ({
        id: firstId + offset,
        kind: "message.sent",
        subject,
        at: new Date().toISOString(),
        data: { messageId: offset, from: "lead", to: subject, type: "message" },
      }));
      hub.publish(published);
      // Published again (another hub path, a duplicate): nobody is sent it twice.
      unsubscribeBroadcast();
      unsubscribeBroadcast = broadcastHubEvents(io, hub, getDb());
      hub.publish(published);
      const idsOf = (received: ConsoleEvent[]) =>
        received.filter((event) => event.subject === subject).map((event) => event.id);
      await waitUntil(() => consoles.every((entry) => idsOf(entry.received).length >= 3));
      await sleep(100);
      for (const entry of consoles)
        expect(idsOf(entry.received)).toEqual(published.map((e) => e.id));
      const encodedOfSubject = encode.mock.calls.filter(([packet]) => {
        const data = (packet as { data?: unknown[] }).data;
        return data?.[0] === "event" && (data[1] as ConsoleEvent | undefined)?.subject === subject;
      });
      expect(encodedOfSubject).toHaveLength(published.length);
    } finally {
      encode.mockRestore();
    }
  });

  it("sends each event once when live events overlap a resume's replay", async () => {
    const subject = uniqueSubject("overlap");
    const hub = new EventHub();
    unsubscribeBroadcast = broadcastHubEvents(io, hub, getDb());
    const ids: number[] = [];
    for (let i = 0; i < 700; i++)
      ids.push(await appendEvent(getDb(), "message.sent", subject, { i }));
    // What the bridge would publish for the same rows; only the ids matter to the feed.
    const published: ConsoleEvent[] = ids.map((id) => ({
      id,
      kind: "message.sent",
      subject,
      at: new Date().toISOString(),
      data: { messageId: id, from: "lead", to: subject, type: "message" },
    }));

    const lead = await signedInHuman("viewer");
    const { socket, received, connected } = openConsole(lead.headers);
    await connected;
    const resumed = new Promise((resolve) => socket.on("resumed", resolve));
    // Published while the replay's pages are still being read or just after: either way once each.
    socket.once("event", () => hub.publish(published));
    socket.emit("resume", { after: (ids[0] ?? 1) - 1 });
    await resumed;
    await sleep(300);

    const receivedIds = received.filter((event) => event.subject === subject).map((e) => e.id);
    expect(receivedIds).toEqual(ids);
  });
});
