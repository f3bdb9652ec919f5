import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import type { Readable } from "node:stream";

/** What `node --inspect` prints on stderr: the address of its DevTools endpoint. */
export const INSPECTOR_ADDRESS = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/;

/** What the bench asks of a server process through its inspector. */
export type InspectedProcess = {
  /** A full garbage collection, before a memory reading. */
  collectGarbage(): Promise<void>;
  /** V8's heap in use, in MiB. */
  readHeapUsedMiB(): Promise<number>;
};

/**
 * Watches the stderr of a process started with `--inspect=127.0.0.1:0` for the address it prints,
 * and calls it there once it has.
 */
export function watchInspector(stderr: Readable | null, name: string): InspectedProcess {
  let address: string | undefined;
  let head = "";
  const find = (chunk: Buffer) => {
    head += chunk.toString("utf8");
    address = INSPECTOR_ADDRESS.exec(head)?.[1];
    if (address !== undefined || head.length > 10_000) stderr?.off("data", find);
  };
  stderr?.on("data", find);
  const printed = () => {
    if (address === undefined) throw new Error(`${name} printed no inspector address`);
    return address;
  };
  return {
    collectGarbage: () => collectGarbage(printed()),
    readHeapUsedMiB: () => readHeapUsedMiB(printed()),
  };
}

/** One masked text frame (a client must mask), for a payload under 64 KiB. */
export function textFrame(text: string): Buffer {
  const payload = Buffer.from(text, "utf8");
  if (payload.length >= 65_536) throw new Error("frame too large");
  const mask = randomBytes(4);
  const header =
    payload.length < 126
      ? Buffer.from([0x81, 0x80 | payload.length])
      : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  const masked = Buffer.from(payload.map((byte, index) => byte ^ (mask[index % 4] as number)));
  return Buffer.concat([header, mask, masked]);
}

/** The text frames complete in `buffer` (a server's frames are not masked), and what is left. */
export function readFrames(buffer: Buffer): { texts: string[]; rest: Buffer } {
  const texts: string[] = [];
  let offset = 0;
  for (;;) {
    if (buffer.length - offset < 2) break;
    const opcode = (buffer[offset] as number) & 0x0f;
    let length = (buffer[offset + 1] as number) & 0x7f;
    let start = offset + 2;
    if (length === 126) {
      if (buffer.length < start + 2) break;
      length = buffer.readUInt16BE(start);
      start += 2;
    } else if (length === 127) {
      if (buffer.length < start + 8) break;
      length = Number(buffer.readBigUInt64BE(start));
      start += 8;
    }
    if (buffer.length < start + length) break;
    if (opcode === 0x1) texts.push(buffer.subarray(start, start + length).toString("utf8"));
    offset = start + length;
  }
  return { texts, rest: buffer.subarray(offset) };
}

/**
 * Calls one method of the DevTools protocol in a process started with `--inspect` and returns its
 * result. A bare WebSocket client: one request, one answer.
 */
export function callInspector(
  address: string,
  method: string,
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  const url = new URL(address);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer to ${method}`));
    }, timeoutMs);
    const finish = (error: Error | undefined, result: Record<string, unknown> = {}) => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(result);
    };
    let buffer: Buffer = Buffer.alloc(0);
    let isUpgraded = false;
    socket.once("error", finish);
    socket.on("connect", () => {
      socket.write(
        `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\n` +
          `Connection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n` +
          "Sec-WebSocket-Version: 13\r\n\r\n",
      );
    });
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!isUpgraded) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buffer.subarray(0, end).toString("latin1");
        if (!head.startsWith("HTTP/1.1 101")) return finish(new Error(`inspector said ${head}`));
        isUpgraded = true;
        buffer = buffer.subarray(end + 4);
        socket.write(textFrame(JSON.stringify({ id: 1, method })));
      }
      const { texts, rest } = readFrames(buffer);
      buffer = rest;
      for (const text of texts) {
        const message = JSON.parse(text) as {
          id?: number;
          error?: { message: string };
          result?: Record<string, unknown>;
        };
        if (message.id !== 1) continue;
        return finish(message.error ? new Error(message.error.message) : undefined, message.result);
      }
    });
  });
}

/**
 * A full garbage collection (`HeapProfiler.collectGarbage`), so an RSS reading taken next holds
 * live objects, not whatever garbage the last phase left.
 */
export async function collectGarbage(address: string): Promise<void> {
  await callInspector(address, "HeapProfiler.collectGarbage");
}

/**
 * What V8's heap holds (`Runtime.getHeapUsage`), in MiB: unlike RSS, it does not depend on
 * whether freed pages went back to the system. Read after `collectGarbage`, it is what is live.
 */
export async function readHeapUsedMiB(address: string): Promise<number> {
  const { usedSize } = await callInspector(address, "Runtime.getHeapUsage");
  if (typeof usedSize !== "number") throw new Error("Runtime.getHeapUsage gave no usedSize");
  return usedSize / 2 ** 20;
}
