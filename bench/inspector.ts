import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import type { Readable } from "node:stream";
import type { CpuProfile } from "./profile";

/** What `node --inspect` prints on stderr: the address of its DevTools endpoint. */
export const INSPECTOR_ADDRESS = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/;

/** What the bench asks of a server process through its inspector. */
export type InspectedProcess = {
  /** A full garbage collection, before a memory reading. */
  collectGarbage(): Promise<void>;
  /** V8's heap in use, in MiB. */
  readHeapUsedMiB(): Promise<number>;
  /** Starts V8's CPU profiler; the function returned stops it and answers the profile. */
  startProfiling(): Promise<() => Promise<CpuProfile>>;
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
    startProfiling: () => startProfiling(printed()),
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

type InspectorMessage = {
  id?: number;
  error?: { message: string };
  result?: Record<string, unknown>;
};

/**
 * A DevTools protocol session with a process started with `--inspect`: a bare WebSocket client
 * that sends calls and matches each answer by its id. The session lasts as long as the connection,
 * and so does what was started on it: V8's profiler stops when its session closes.
 */
export class InspectorSession {
  private readonly waiting = new Map<
    number,
    { resolve: (result: Record<string, unknown>) => void; reject: (error: Error) => void }
  >();
  private nextId = 1;
  private received: Buffer = Buffer.alloc(0);
  private failure: Error | undefined;

  private constructor(private readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => this.receive(chunk));
    const fail = (error: Error) => {
      this.failure ??= error;
      for (const { reject } of this.waiting.values()) reject(this.failure);
      this.waiting.clear();
    };
    socket.on("error", fail);
    socket.on("close", () => fail(new Error("the inspector closed the connection")));
  }

  static open(address: string, timeoutMs = 30_000): Promise<InspectorSession> {
    const url = new URL(address);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`the inspector at ${address} did not answer`));
      }, timeoutMs);
      let head = Buffer.alloc(0);
      const onHead = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) return;
        socket.off("data", onHead);
        socket.off("error", onError);
        clearTimeout(timer);
        const status = head.subarray(0, end).toString("latin1");
        if (!status.startsWith("HTTP/1.1 101")) {
          socket.destroy();
          reject(new Error(`inspector said ${status}`));
          return;
        }
        const session = new InspectorSession(socket);
        const rest = head.subarray(end + 4);
        if (rest.length > 0) session.receive(rest);
        resolve(session);
      };
      const onError = (error: Error) => {
        clearTimeout(timer);
        reject(error);
      };
      socket.on("data", onHead);
      socket.once("error", onError);
      socket.on("connect", () => {
        socket.write(
          `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\n` +
            `Connection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n` +
            "Sec-WebSocket-Version: 13\r\n\r\n",
        );
      });
    });
  }

  call(
    method: string,
    params: Record<string, unknown> = {},
    timeoutMs = 30_000,
  ): Promise<Record<string, unknown>> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`no answer to ${method}`));
      }, timeoutMs);
      this.waiting.set(id, {
        resolve: (result) => {
          clearTimeout(timer);
          resolve(result);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.socket.write(textFrame(JSON.stringify({ id, method, params })));
    });
  }

  close(): void {
    this.socket.destroy();
  }

  // A profile comes as one frame in many chunks: it is read once the last has come.
  private receive(chunk: Buffer): void {
    const { texts, rest } = readFrames(Buffer.concat([this.received, chunk]));
    this.received = rest;
    for (const text of texts) {
      const message = JSON.parse(text) as InspectorMessage;
      if (message.id === undefined) continue;
      const waiter = this.waiting.get(message.id);
      if (!waiter) continue;
      this.waiting.delete(message.id);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result ?? {});
    }
  }
}

/** Calls one method in a session of its own. */
export async function callInspector(
  address: string,
  method: string,
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  const session = await InspectorSession.open(address, timeoutMs);
  try {
    return await session.call(method, {}, timeoutMs);
  } finally {
    session.close();
  }
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

/** V8's sampling interval, as `node --cpu-prof` takes samples by default. */
const PROFILE_SAMPLING_INTERVAL_US = 1_000;

/**
 * V8's CPU profiler, started through the inspector and stopped there: the bench profiles only
 * the phases it has profiles of, where `node --cpu-prof` profiled the whole run and slowed the
 * others' figures with it. The session stays open from start to stop.
 */
export async function startProfiling(address: string): Promise<() => Promise<CpuProfile>> {
  const session = await InspectorSession.open(address);
  try {
    await session.call("Profiler.enable");
    await session.call("Profiler.setSamplingInterval", { interval: PROFILE_SAMPLING_INTERVAL_US });
    await session.call("Profiler.start");
  } catch (error) {
    session.close();
    throw error;
  }
  return async () => {
    try {
      const { profile } = await session.call("Profiler.stop", {}, 120_000);
      if (!isCpuProfile(profile)) throw new Error("Profiler.stop gave no profile");
      return profile;
    } finally {
      session.close();
    }
  };
}

function isCpuProfile(value: unknown): value is CpuProfile {
  const profile = value as Partial<CpuProfile> | null;
  return (
    Array.isArray(profile?.nodes) &&
    Array.isArray(profile.samples) &&
    Array.isArray(profile.timeDeltas) &&
    typeof profile.startTime === "number"
  );
}
