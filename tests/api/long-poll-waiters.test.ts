import { connect, type Socket } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

// One agent may hold this many inbox long-polls in this file: the attacker below holds them all.
vi.hoisted(() => {
  process.env.HANDSHAKE_AGENT_OPEN_LONG_POLLS = "1000";
  process.env.HANDSHAKE_AGENT_OPEN_REQUEST_WAITS = "1000";
});

import { getEventHub } from "../../lib/realtime/event-hub";
import { collectGarbage, INSPECTOR_ADDRESS, readHeapUsedMiB } from "../../bench/inspector";
import { readProcessCpuSeconds } from "../../bench/machine-cpu";
import { startApiNode } from "../support/api-node";
import { startApiServer } from "../support/api-server";
import { runEventBridgeDuringFile } from "../support/event-bridge-hooks";
import { api, lead, registerAgent, submitPlan, type TestAgent } from "./fixtures";

runEventBridgeDuringFile();

const LONG_POLLS = 1_000;

let server: Awaited<ReturnType<typeof startApiServer>>;
beforeAll(async () => {
  server = await startApiServer();
});
afterAll(() => server.close());

/** A bare HTTP client: one socket and one request line, so the server's side is what grows. */
function openLongPoll(
  agent: TestAgent,
  query: string,
  url = server.url,
  path = "/api/v1/inbox",
): Promise<Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () => {
      socket.write(
        `GET ${path}${query} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Authorization: Bearer ${agent.token}\r\n\r\n`,
      );
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function openAll(agent: TestAgent): Promise<Socket[]> {
  const hub = getEventHub();
  const sockets: Socket[] = [];
  for (let index = 0; index < LONG_POLLS; index += 100) {
    sockets.push(
      ...(await Promise.all(Array.from({ length: 100 }, () => openLongPoll(agent, "?wait=30")))),
    );
  }
  await until(() => hub.waiterCount === LONG_POLLS, `${LONG_POLLS} waiters (${hub.waiterCount})`);
  return sockets;
}

async function dropAll(sockets: Socket[]): Promise<void> {
  for (const socket of sockets) socket.destroy();
  await until(() => getEventHub().waiterCount === 0, `no waiter (${getEventHub().waiterCount})`);
}

/** The heap in use after full collections: what live objects hold, without the garbage. */
function liveBytes(): number {
  setFlagsFromString("--expose-gc");
  setFlagsFromString("--no-flush-bytecode");
  const gc = runInNewContext("gc") as () => void;
  for (let round = 0; round < 3; round++) gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

describe("open long-polls over HTTP", () => {
  it("an attacker opening and dropping 1,000 long-polls leaves no waiter and no held slot", async () => {
    const attacker = await registerAgent();
    await dropAll(await openAll(attacker));
    // Every slot came back: the agent can open its whole allowance again, and drop it again.
    await dropAll(await openAll(attacker));
    const poll = await api.inbox(attacker.headers, "?wait=1");
    expect(poll.status).toBe(200);
  }, 120_000);

  it("an attacker dropping long-polls before their wait begins leaves no waiter behind", async () => {
    const attacker = await registerAgent();
    const pending = (await submitPlan(attacker)).json.id as string;
    // Gone before the node reaches them: each wait is made for a client that already left.
    const path = `/api/v1/requests/${pending}`;
    const sockets = await Promise.all(
      Array.from({ length: 100 }, () => openLongPoll(attacker, "?wait=30", server.url, path)),
    );
    for (const socket of sockets) socket.destroy();
    // Long enough for the node to handle all of them, far short of their 30 s wait.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(getEventHub().waiterCount).toBe(0);
  });

  it("a held long-poll still wakes on a message and still ends after its wait", async () => {
    const agent = await registerAgent();
    const held = api.inbox(agent.headers, "?wait=10");
    await until(() => getEventHub().waiterCount === 1, "the waiter");
    await api.sendMessage((await lead()).headers, { to: agent.name, content: "wake up" });
    const woken = await held;
    expect((woken.json.messages as { content: string }[]).map((m) => m.content)).toEqual([
      "wake up",
    ]);
    const startedAt = performance.now();
    const empty = await api.inbox(agent.headers, `?after=${String(woken.json.cursor)}&wait=1`);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(900);
    expect(empty.json.messages).toEqual([]);
    expect(getEventHub().waiterCount).toBe(0);
  });

  it("holds little memory per open long-poll (heap after collection, client sockets included)", async () => {
    const agent = await registerAgent();
    // Warm every code path first, so compiled code and caches are not counted as the waiters'.
    await dropAll(await openAll(agent));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const before = liveBytes();
    const sockets = await openAll(agent);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const perLongPoll = (liveBytes() - before) / LONG_POLLS;
    await dropAll(sockets);
    console.log(`live bytes per open long-poll: ${(perLongPoll / 1024).toFixed(1)} KiB`);
    // Issue 18: 10.7–11.1 KiB measured with the answer deferred (decision 041), 15.0–15.1 without
    // it, 19.6–20.1 before decision 038, 9.6–10.3 with no AbortController and the route's answer
    // chained (decision 050), 7.8–8.1 with the wait made of callbacks (decision 051). Read in the
    // test's own process, it moves by half a KiB from run to run; 9.2 fails if the wait's async
    // frames come back. The test below reads the served node more finely.
    expect(perLongPoll).toBeLessThan(9.2 * 1024);
  }, 120_000);

  it("as served, in its own process under tsx, holds little V8 heap per open long-poll", async () => {
    const node = await startApiNode({
      databaseUrl: process.env.DATABASE_URL as string,
      label: "memory",
      nodeArgs: ["--inspect=127.0.0.1:0"],
    });
    try {
      const address = INSPECTOR_ADDRESS.exec(node.output())?.[1];
      if (address === undefined) throw new Error(`no inspector address in ${node.output()}`);
      const agent = await registerAgent();
      // A long-poll held open sends nothing back; a refused or answered one does.
      const openAllOnNode = async (path: string) => {
        const sockets: Socket[] = [];
        let answered = 0;
        for (let index = 0; index < LONG_POLLS; index += 100) {
          const opened = Array.from({ length: 100 }, () =>
            openLongPoll(agent, "?wait=30", node.url, path),
          );
          sockets.push(...(await Promise.all(opened)));
        }
        for (const socket of sockets) socket.once("data", () => (answered += 1));
        // Until the node has handled them all: its CPU falls to a tenth of a core, well above
        // what its bridge and sweeper use idle and well below what 1,000 requests take.
        for (let before = -1, now = await readProcessCpuSeconds(node.pid); now - before > 0.05;) {
          await new Promise((resolve) => setTimeout(resolve, 500));
          [before, now] = [now, await readProcessCpuSeconds(node.pid)];
        }
        // Then every slot is taken: one more is refused, and took none from them. A node starved
        // of the machine's cores can read idle with a few still to register: one more is
        // then let in for its second, and the next is asked.
        const refusedExtra = async () => {
          for (let tries = 0; tries < 20; tries += 1) {
            const extra = await fetch(`${node.url}${path}?wait=1`, { headers: agent.headers });
            if (extra.status !== 200) return extra.status;
          }
          return 200;
        };
        expect(await refusedExtra()).toBe(429);
        expect(answered).toBe(0);
        return sockets;
      };
      const heapAfterCollection = async () => {
        await collectGarbage(address);
        return readHeapUsedMiB(address);
      };
      const heapPerLongPollKiB = async (path: string) => {
        // Warm every code path first, so compiled code and caches are not counted as the waiters'.
        for (const socket of await openAllOnNode(path)) socket.destroy();
        const readings: number[] = [];
        // Three times, keeping the lowest: on the same server code one reading has ranged over
        // more than a KiB (8.4–9.9 at 3cb5f3f), as whatever else the node allocated between a
        // pair is counted too, never subtracted.
        for (let round = 0; round < 3; round++) {
          await new Promise((resolve) => setTimeout(resolve, 2_000));
          const idleMiB = await heapAfterCollection();
          const sockets = await openAllOnNode(path);
          readings.push(((await heapAfterCollection()) - idleMiB) * (1024 / LONG_POLLS));
          for (const socket of sockets) socket.destroy();
        }
        const perLongPoll = Math.min(...readings);
        console.log(
          `V8 heap per open ${path} long-poll, as served: ${readings.map((kib) => kib.toFixed(1)).join(" and ")} KiB`,
        );
        return perLongPoll;
      };
      // Issue 18: the inbox read 13.7 KiB here before the answer was deferred (decision 041),
      // 10.3–10.5 with it, 8.4–9.0 once a wait held no closure of its own (under tsx each carries
      // a `name` property), 6.9–7.6 once the client's leaving was heard from the response and the
      // route's answer chained rather than awaited (decision 050), 5.3–6.1 with the wait made of
      // callbacks, linked by key and timed by grain (decision 051); with an AbortController
      // again, 7.9–8.0 at decision 050; 4.8–5.2 once a wait held neither its request nor a
      // promise of its answer (decision 086, 5.6–5.7 before it). A request's wait reads 6.2–6.6,
      // with the whole suite running beside it; 7.5–8.0 at decision 050, 12.0 undeferred, 5.4–5.5
      // at decision 086 (6.0–6.3 before it).
      expect(await heapPerLongPollKiB("/api/v1/inbox")).toBeLessThan(6.8);
      const pending = (await submitPlan(agent)).json.id as string;
      const requestPath = `/api/v1/requests/${pending}`;
      const requestWait = await heapPerLongPollKiB(requestPath);
      // Measured while it waited on the Lead: a decided request answers at once and holds nothing.
      const read = await fetch(`${node.url}${requestPath}`, { headers: agent.headers });
      expect(((await read.json()) as { status: string }).status).toBe("pending");
      expect(requestWait).toBeLessThan(7.2);
    } finally {
      await node.stop();
    }
  }, 180_000);
});
