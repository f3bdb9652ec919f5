import http from "node:http";
import { text } from "node:stream/consumers";
import type { z } from "zod";
import { parseApiAnswer } from "../shared/http/api-fetch";
import { ApiError, UnreachableError } from "./errors";

const RETRYABLE_NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT"]);

// Node's own HTTP client rather than fetch (decision 047): per call it costs the caller well under
// half of fetch's CPU and answers sooner, and a new process's first call (the Claude Code hook
// runs one per tool call) skips loading fetch's implementation. Idle sockets are kept for the
// next call; Node's agent unrefs an idle one, so it never holds a process open.
type Client = { open: typeof http.request; agent: http.Agent };

const plainClient: Client = { open: http.request, agent: new http.Agent({ keepAlive: true }) };

// Loaded on the first https address only: TLS costs a process that never uses it ~4 ms to load.
let tlsClient: Promise<Client> | undefined;

function clientFor(url: URL): Client | Promise<Client> {
  if (url.protocol !== "https:") return plainClient;
  tlsClient ??= import("node:https").then((https) => ({
    open: https.request,
    agent: new https.Agent({ keepAlive: true }),
  }));
  return tlsClient;
}

type HttpAnswer = { status: number; statusText: string; text: string };

/** What a call that outlived its deadline fails with; the same error AbortSignal.timeout gives. */
function deadlinePassed(): DOMException {
  return new DOMException("The operation was aborted due to timeout", "TimeoutError");
}

function isDeadlinePassed(error: unknown): boolean {
  return error instanceof DOMException && error.name === "TimeoutError";
}

/**
 * Async, so that a malformed address is a failed call like a refused connection. The deadline is
 * a timer of its own, cleared with the answer, rather than an AbortSignal.timeout handed to the
 * request (decision 064): that cost a call about 40% more CPU than the rest of it, and left its
 * timer pending after the answer.
 */
async function send(
  address: string,
  init: {
    method: string;
    headers: Record<string, string>;
    body?: string | undefined;
    signal?: AbortSignal | undefined;
    timeoutMs: number;
  },
): Promise<HttpAnswer> {
  const url = new URL(address);
  const { open, agent } = await clientFor(url);
  return new Promise<HttpAnswer>((resolve, reject) => {
    let timedOut: DOMException | undefined;
    const deadline = setTimeout(() => {
      timedOut = deadlinePassed();
      request.destroy(timedOut);
    }, init.timeoutMs);
    // As AbortSignal.timeout's: a pending call holds the process through its socket, not this.
    deadline.unref();
    const fail = (error: unknown) => {
      clearTimeout(deadline);
      reject(timedOut ?? error);
    };
    const request = open(
      url,
      {
        method: init.method,
        headers: init.headers,
        agent,
        ...(init.signal && { signal: init.signal }),
      },
      (response) => {
        text(response).then((body) => {
          clearTimeout(deadline);
          resolve({
            status: response.statusCode ?? 0,
            statusText: response.statusMessage ?? "",
            text: body,
          });
        }, fail);
      },
    );
    request.on("error", fail);
    request.end(init.body);
  });
}

export type TransportOptions = {
  /** Network failures and 503s retried with backoff; 0 for a caller that must answer at once. */
  maxRetries?: number;
  /** Per request; a long-poll adds its wait on top. */
  timeoutMs?: number;
};

export type CallOptions = { body?: unknown; signal?: AbortSignal; waitSeconds?: number };

function backOff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(200 * 2 ** attempt, 2_000)));
}

function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && RETRYABLE_NETWORK_CODES.has(code);
}

/**
 * JSON over HTTP with a bearer token, exactly as an external client in any language would call
 * Handshake. Network failures (a server restarting) are retried with backoff; refusals are not,
 * they are answers. Every answer is checked against its schema: a client acts on nothing it has
 * not understood.
 */
export class HttpTransport {
  private readonly maxRetries: number;
  private readonly timeoutMs: number;

  constructor(
    readonly baseUrl: string,
    private readonly token: string,
    options: TransportOptions = {},
  ) {
    this.maxRetries = options.maxRetries ?? 20;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  async call<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S,
    options: CallOptions = {},
  ): Promise<z.infer<S>> {
    const { body, signal } = options;
    const timeoutMs = this.timeoutMs + (options.waitSeconds ?? 0) * 1_000;
    const address = `${this.baseUrl}/api/v1${path}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.token}`,
      ...(payload === undefined
        ? {}
        : {
            "content-type": "application/json",
            "content-length": String(Buffer.byteLength(payload)),
          }),
    };
    for (let attempt = 0; ; attempt++) {
      let answer: HttpAnswer;
      try {
        answer = await send(address, { method, headers, body: payload, signal, timeoutMs });
      } catch (error) {
        // As fetch does: an abort asked for by the caller rejects with the caller's reason.
        if (signal?.aborted) throw signal.reason;
        if (isDeadlinePassed(error)) throw new UnreachableError(this.baseUrl, error);
        if (isRetryable(error) && attempt < this.maxRetries) {
          await backOff(attempt);
          continue;
        }
        // Nothing but the connection can fail in `send`: no answer came.
        throw new UnreachableError(this.baseUrl, error);
      }
      // 503 means the server is up but its database is not: wait and ask again, like a refused
      // connection. (Only idempotent or keyed requests reach a 503 without having changed anything.)
      if (answer.status === 503 && attempt < this.maxRetries && !signal?.aborted) {
        await backOff(attempt);
        continue;
      }
      const json = parseApiAnswer<unknown>(answer.status, answer.statusText, answer.text);
      const parsed = schema.safeParse(json);
      if (!parsed.success) {
        throw new ApiError(
          answer.status,
          "INVALID_RESPONSE",
          `unexpected answer from ${method} ${path}: ${parsed.error.message}`,
          {},
        );
      }
      return parsed.data;
    }
  }
}
