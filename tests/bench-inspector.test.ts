import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  collectGarbage,
  INSPECTOR_ADDRESS,
  InspectorSession,
  readFrames,
  readHeapUsedMiB,
  textFrame,
} from "../bench/inspector";

const children: ReturnType<typeof spawn>[] = [];
const servers: Server[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const server of servers.splice(0)) server.close();
});

/** An unmasked server frame with a 64-bit length, as an inspector sends a large answer. */
function longServerFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const head = Buffer.alloc(10);
  head[0] = 0x81;
  head[1] = 127;
  head.writeBigUInt64BE(BigInt(payload.length), 2);
  return Buffer.concat([head, payload]);
}

/** Unmasks a client frame the way a WebSocket server does. */
function unmask(frame: Buffer): string {
  let length = (frame[1] as number) & 0x7f;
  let offset = 2;
  if (length === 126) {
    length = frame.readUInt16BE(2);
    offset = 4;
  }
  const mask = frame.subarray(offset, offset + 4);
  const payload = frame.subarray(offset + 4, offset + 4 + length);
  return Buffer.from(payload.map((byte, index) => byte ^ (mask[index % 4] as number))).toString();
}

/**
 * A WebSocket server that upgrades the first request and hands each call it is sent (one frame
 * per write, as the session writes them) to `answer`; the address to open a session on.
 */
async function fakeInspector(
  answer: (socket: Socket, id: number, method: string) => void,
): Promise<string> {
  const server = createServer((socket) => {
    let isUpgraded = false;
    socket.on("data", (chunk: Buffer) => {
      if (!isUpgraded) {
        isUpgraded = chunk.includes("\r\n\r\n");
        if (isUpgraded) socket.write("HTTP/1.1 101 Switching Protocols\r\n\r\n");
        return;
      }
      const { id, method } = JSON.parse(unmask(chunk)) as { id: number; method: string };
      answer(socket, id, method);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return `ws://127.0.0.1:${port}/session`;
}

describe("bench/inspector.ts", () => {
  it("frames a masked text message, short and medium", () => {
    const short = textFrame('{"id":1}');
    expect(short[0]).toBe(0x81);
    expect((short[1] as number) & 0x80).toBe(0x80);
    expect(unmask(short)).toBe('{"id":1}');
    const medium = "x".repeat(300);
    expect(unmask(textFrame(medium))).toBe(medium);
  });

  it("reads whole frames of each length form and keeps a partial one for later", () => {
    const frame = (text: string) => {
      const payload = Buffer.from(text);
      if (payload.length < 126)
        return Buffer.concat([Buffer.from([0x81, payload.length]), payload]);
      const head = Buffer.from([0x81, 126, 0, 0]);
      head.writeUInt16BE(payload.length, 2);
      return Buffer.concat([head, payload]);
    };
    const long = "y".repeat(1_000);
    const both = Buffer.concat([frame("a"), frame(long), frame("tail")]);
    const { texts, rest } = readFrames(both.subarray(0, both.length - 2));
    expect(texts).toEqual(["a", long]);
    expect(readFrames(Buffer.concat([rest, both.subarray(both.length - 2)])).texts).toEqual([
      "tail",
    ]);
  });

  it("reads an answer of hundreds of kilobytes that comes in many small writes", async () => {
    const big = "z".repeat(300_000);
    const address = await fakeInspector((socket, id) => {
      const frame = Buffer.concat([
        longServerFrame(JSON.stringify({ method: "Some.event", params: {} })),
        longServerFrame(JSON.stringify({ id, result: { big } })),
      ]);
      const writeFrom = (offset: number) => {
        if (offset >= frame.length) return;
        socket.write(frame.subarray(offset, offset + 4_096));
        setImmediate(() => writeFrom(offset + 4_096));
      };
      writeFrom(0);
    });
    const session = await InspectorSession.open(address);
    try {
      const result = await session.call("Some.method");
      expect(result.big).toBe(big);
    } finally {
      session.close();
    }
  });

  it("fails a call the inspector refuses, and every call waiting when its connection closes", async () => {
    const address = await fakeInspector((socket, id, method) => {
      if (method === "Refused.method") {
        socket.write(longServerFrame(JSON.stringify({ id, error: { message: "no such method" } })));
      } else {
        socket.destroy();
      }
    });
    const session = await InspectorSession.open(address);
    try {
      await expect(session.call("Refused.method")).rejects.toThrow("no such method");
      await expect(session.call("Profiler.stop")).rejects.toThrow("closed the connection");
      await expect(session.call("Profiler.start")).rejects.toThrow("closed the connection");
    } finally {
      session.close();
    }
  });

  it("refuses a session when the address does not upgrade to a WebSocket", async () => {
    const server = createServer((socket) =>
      socket.once("data", () => socket.end("HTTP/1.1 404 Not Found\r\n\r\n")),
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await expect(InspectorSession.open(`ws://127.0.0.1:${port}/session`)).rejects.toThrow(
      "inspector said HTTP/1.1 404",
    );
  });

  it("makes a process started with --inspect collect its garbage (heap and RSS drop)", async () => {
    const child = spawn(
      process.execPath,
      [
        "--inspect=127.0.0.1:0",
        "-e",
        "let junk = []; for (let i = 0; i < 300000; i++) junk.push({ i, s: 'x'.repeat(64) + i });" +
          " junk = null; setInterval(() => {}, 1000);",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    children.push(child);
    let stderr = "";
    const address = await new Promise<string>((resolve) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        const found = INSPECTOR_ADDRESS.exec(stderr)?.[1];
        if (found) resolve(found);
      });
    });
    const rssMiB = async () =>
      Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${child.pid}/status`, "utf8"))?.[1]) /
      1024;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = await rssMiB();
    const heapBefore = await readHeapUsedMiB(address);
    await collectGarbage(address);
    expect(await rssMiB()).toBeLessThan(before - 10);
    expect(await readHeapUsedMiB(address)).toBeLessThan(heapBefore - 10);
  }, 30_000);
});
