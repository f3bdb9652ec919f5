import { io as connect, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import pg from "pg";
import { requireDatabaseUrl } from "../../lib/env";
import {
  createPresence,
  PRESENCE_CHANNEL,
  REANNOUNCE_MS,
  STALE_AFTER_MS,
  startPresenceTransport,
} from "../../lib/realtime/presence";
import { newRequestId } from "../../lib/requests/request-id";
import type {
  ClientToServerEvents,
  PresencePayload,
  ServerToClientEvents,
} from "../../lib/shared/realtime/contract";
import { startConsoleServer } from "../support/console-server";
import { startPgProxy } from "../support/pg-proxy";
import { signedInHuman } from "../route-client";

type ConsoleClient = Socket<ServerToClientEvents, ClientToServerEvents>;

const servers: { baseUrl: string; stop: () => Promise<void> }[] = [];
const sockets: ConsoleClient[] = [];

beforeAll(async () => {
  servers.push(await startConsoleServer({ withPresence: true }));
  servers.push(await startConsoleServer({ withPresence: true }));
});

afterAll(async () => {
  for (const socket of sockets) socket.disconnect();
  for (const server of servers) await server.stop();
  await getDb().$disconnect();
});

async function openConsole(
  headers: Record<string, string>,
  url = servers[0]!.baseUrl,
): Promise<ConsoleClient> {
  const socket: ConsoleClient = connect(`${url}/console`, {
    transports: ["websocket"],
    extraHeaders: { origin: url, ...headers },
    reconnection: false,
  });
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.on("connect", resolve);
    socket.on("connect_error", reject);
  });
  return socket;
}

/** Resolves with the first presence of `requestId` whose viewers are exactly `emails`. */
function presenceOf(
  socket: ConsoleClient,
  requestId: string,
  emails: string[],
): Promise<PresencePayload> {
  const expected = [...emails].sort();
  return new Promise((resolve) => {
    const onPresence = (payload: PresencePayload) => {
      if (payload.requestId !== requestId) return;
      const seen = payload.viewers.map((viewer) => viewer.email).sort();
      if (JSON.stringify(seen) !== JSON.stringify(expected)) return;
      socket.off("presence", onPresence);
      resolve(payload);
    };
    socket.on("presence", onPresence);
  });
}

describe("presence: who else has a card open", () => {
  it("two Leads on one node see each other; closing or disconnecting clears", async () => {
    const [alice, bob] = [await signedInHuman("lead"), await signedInHuman("lead")];
    const card = newRequestId();
    const aliceSocket = await openConsole(alice.headers);
    const bobSocket = await openConsole(bob.headers);

    const aliceAlone = presenceOf(aliceSocket, card, [alice.email]);
    aliceSocket.emit("viewing", { requestId: card });
    await aliceAlone;

    const bothForAlice = presenceOf(aliceSocket, card, [alice.email, bob.email]);
    const bothForBob = presenceOf(bobSocket, card, [alice.email, bob.email]);
    bobSocket.emit("viewing", { requestId: card });
    await Promise.all([bothForAlice, bothForBob]);

    // Bob moves to another card: he leaves this one.
    const bobLeft = presenceOf(aliceSocket, card, [alice.email]);
    bobSocket.emit("viewing", { requestId: newRequestId() });
    await bobLeft;

    const bobBack = presenceOf(bobSocket, card, [alice.email, bob.email]);
    bobSocket.emit("viewing", { requestId: card });
    await bobBack;
    const aliceGone = presenceOf(bobSocket, card, [bob.email]);
    aliceSocket.disconnect();
    await aliceGone;
  });

  it("a client names only a card, never a person, and bad messages are refused", async () => {
    const carol = await signedInHuman("lead");
    const socket = await openConsole(carol.headers);
    const card = newRequestId();
    for (const payload of [
      { requestId: card, email: "someone-else@example.com" },
      { requestId: "'; DROP TABLE requests; --" },
      { requestId: "x".repeat(100_000) },
      {},
      null,
    ]) {
      const error = new Promise<{ code: string }>((resolve) => socket.once("error", resolve));
      socket.emit("viewing", payload as never);
      expect(await error).toMatchObject({ code: "INVALID_INPUT" });
    }
    const asCarol = presenceOf(socket, card, [carol.email]);
    socket.emit("viewing", { requestId: card });
    await asCarol;
    expect(socket.connected).toBe(true);
  });

  it("the card-change budget is a person's, not a socket's: more sockets are no bigger flood", async () => {
    // Red team: each socket had its own 50 per 10 s, so one account with many sockets multiplied
    // the NOTIFYs and the broadcasts to every console.
    const dave = await signedInHuman("viewer");
    const daveSockets = [await openConsole(dave.headers), await openConsole(dave.headers)];
    const limited = new Promise<{ code: string }>((resolve) => {
      for (const socket of daveSockets) {
        socket.on("error", (error) => {
          if (error.code === "RATE_LIMITED") resolve(error);
        });
      }
    });
    for (let index = 0; index < 30; index += 1) {
      for (const socket of daveSockets) socket.emit("viewing", { requestId: newRequestId() });
    }
    expect(await limited).toMatchObject({ code: "RATE_LIMITED" });
  });

  it("reaches a Lead on another web node through NOTIFY, and clears there on disconnect", async () => {
    const [dana, erin] = [await signedInHuman("lead"), await signedInHuman("viewer")];
    const card = newRequestId();
    const onFirst = await openConsole(dana.headers, servers[0]!.baseUrl);
    const onSecond = await openConsole(erin.headers, servers[1]!.baseUrl);

    const seenAcrossNodes = presenceOf(onSecond, card, [dana.email, erin.email]);
    onFirst.emit("viewing", { requestId: card });
    await presenceOf(onFirst, card, [dana.email]);
    onSecond.emit("viewing", { requestId: card });
    await seenAcrossNodes;
    await presenceOf(onFirst, card, [dana.email, erin.email]);

    const cleared = presenceOf(onSecond, card, [erin.email]);
    onFirst.disconnect();
    await cleared;
  });
});

describe("presence state of one node", () => {
  it("forgets another node's viewers once it stops announcing them", async () => {
    let clock = 0;
    const changes: PresencePayload[] = [];
    const presence = createPresence({
      transport: { publish: async () => undefined, stop: async () => undefined },
      onChange: (payload) => changes.push(payload),
      now: () => clock,
    });
    const card = newRequestId();
    presence.receive(
      JSON.stringify({
        node: "other",
        requestId: card,
        viewers: [{ userId: "u1", email: "far@example.com" }],
      }),
    );
    expect(presence.viewersOf(card).viewers).toEqual([{ email: "far@example.com" }]);
    presence.receive("not json");
    presence.receive(JSON.stringify({ node: "other", requestId: card, viewers: "everyone" }));
    expect(presence.viewersOf(card).viewers).toHaveLength(1);
    presence.setViewing("s1", { userId: "u2", email: "near@example.com" }, card);
    expect(presence.viewersOf(card).viewers.map((viewer) => viewer.email)).toEqual([
      "far@example.com",
      "near@example.com",
    ]);
    clock = STALE_AFTER_MS + 1;
    expect(presence.viewersOf(card).viewers).toEqual([{ email: "near@example.com" }]);
    presence.forget("s1");
    expect(changes.at(-1)).toEqual({ requestId: card, viewers: [] });
    await presence.stop();
  });
});

/** Waits until `heard` holds `payload`, up to a second. */
async function untilHeard(heard: string[], payload: string): Promise<void> {
  for (let tries = 0; tries < 50 && !heard.includes(payload); tries++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("presence's listener", () => {
  it("hears other nodes again after the database refused it for a while", async () => {
    // Red team, round nine: one refused reconnect ended its retries, and the node never again
    // saw another node's viewers.
    const proxy = await startPgProxy();
    const heard: string[] = [];
    const transport = await startPresenceTransport(
      proxy.via(requireDatabaseUrl()),
      (payload) => heard.push(payload),
      { reconnectDelayMs: 100 },
    );
    const speaker = await startPresenceTransport(requireDatabaseUrl(), () => undefined);
    const notify = (payload: string) => speaker.publish(payload);
    const waitToHear = async (payload: string) => {
      for (let tries = 0; tries < 100 && !heard.includes(payload); tries++) {
        await notify(payload);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(heard).toContain(payload);
    };
    try {
      await waitToHear("before");
      proxy.down();
      // Long enough for several refused attempts (100, 200, 400, 800 ms).
      await new Promise((resolve) => setTimeout(resolve, 1_800));
      proxy.up();
      await waitToHear("after");
    } finally {
      await speaker.stop();
      await transport.stop();
      await proxy.close();
    }
  });

  it("hears only what a node signed: a login that may NOTIFY cannot put a viewer on a card", async () => {
    // Red team, round nine: unsigned announcements showed a forged viewer to every Lead.
    const heard: string[] = [];
    const transport = await startPresenceTransport(requireDatabaseUrl(), (payload) =>
      heard.push(payload),
    );
    const speaker = await startPresenceTransport(requireDatabaseUrl(), () => undefined);
    const forger = new pg.Client({ connectionString: requireDatabaseUrl() });
    await forger.connect();
    try {
      const forged = JSON.stringify({
        node: "forged",
        requestId: "req_x",
        viewers: [{ userId: "u", email: "cto@example.com (already approving this)" }],
      });
      for (const payload of [forged, `${"0".repeat(64)} ${Date.now()} ${forged}`]) {
        await forger.query("SELECT pg_notify($1, $2)", [PRESENCE_CHANNEL, payload]);
      }
      await speaker.publish("signed");
      await untilHeard(heard, "signed");
      // Other test files' nodes announce on the same channel, signed: only the forger's is looked
      // for (decision 079).
      expect(heard).toContain("signed");
      expect(heard.filter((payload) => payload.includes("forged"))).toEqual([]);
    } finally {
      await forger.end();
      await speaker.stop();
      await transport.stop();
    }
  });

  it("drops a signed announcement heard long after it was sent: a recorded one cannot be replayed", async () => {
    // Review, round nine: anyone who may LISTEN could record "cto@… views R" and play it back
    // after the CTO had left the card.
    const heardNow: string[] = [];
    const heardLater: string[] = [];
    const now = await startPresenceTransport(requireDatabaseUrl(), (payload) =>
      heardNow.push(payload),
    );
    // A node whose clock reads 21 s on: every announcement is older than it may be.
    const later = await startPresenceTransport(
      requireDatabaseUrl(),
      (payload) => heardLater.push(payload),
      { now: () => Date.now() + 2 * REANNOUNCE_MS + 1_000 },
    );
    const speaker = await startPresenceTransport(requireDatabaseUrl(), () => undefined);
    try {
      await speaker.publish("fresh");
      await untilHeard(heardNow, "fresh");
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(heardNow).toContain("fresh");
      expect(heardLater).toEqual([]);
    } finally {
      await speaker.stop();
      await later.stop();
      await now.stop();
    }
  });
});
