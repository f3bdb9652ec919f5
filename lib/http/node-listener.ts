import {
  createServer,
  ServerResponse,
  STATUS_CODES,
  type RequestListener,
  type Server,
  type ServerOptions,
} from "node:http";
import type { Duplex } from "node:stream";
import { getRequestListener, RequestError } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Hono } from "hono";
import { clientGoneOf, isClientGoneListener, type ClientGone } from "./client-gone";
import { AppError } from "../errors";
import { encodedJsonOf, errorResponse, internalError } from "./route";
import { API_RESPONSE_HEADERS, withApiHeaders } from "./security-headers";

/**
 * The HTTP server's options. A keep-alive client reuses
 * an idle socket until a second before the `Keep-Alive: timeout` the server announces, so a request
 * sent as the server's own timer fires (the client's timer late by a busy event loop) meets a
 * closed socket: ECONNRESET on a POST the client cannot retry. Node's 5 s puts that race within a
 * pause any agent, the console's tests or the bench's profiled pass takes between calls; at
 * 65 s (past a proxy's usual 60 s idle, as proxies expect of the server behind them) it needs a
 * minute's silence on an open socket. An idle socket costs a descriptor and a few KiB.
 */
const NODE_SERVER_OPTIONS = { keepAliveTimeout: 65_000 } as const satisfies ServerOptions;

/** Node's own refusals, before any route: a request it could not read as HTTP, or not in time. */
function clientErrorOf(code: string | undefined): AppError {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return new AppError(
        "HEADERS_TOO_LARGE",
        "the request's headers are larger than this server takes",
      );
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return new AppError(
        "PAYLOAD_TOO_LARGE",
        "the request's chunk extensions are larger than this server takes",
      );
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new AppError("REQUEST_TIMEOUT", "the request did not arrive in time");
    default:
      return new AppError("INVALID_INPUT", "the request is not HTTP this server can read");
  }
}

function clientErrorAnswer(error: AppError): string {
  const body = JSON.stringify(error.toBody());
  const headers = [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ""}`,
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Cache-Control: no-store",
    ...API_RESPONSE_HEADERS.map(({ key, value }) => `${key}: ${value}`),
    "Connection: close",
  ];
  return `${headers.join("\r\n")}\r\n\r\n${body}`;
}

/**
 * The HTTP server of server.ts and the tests' nodes alike. A request Node cannot parse (headers
 * over its limit, a bad request line, Content-Length beside Transfer-Encoding) or that did not
 * arrive in time is answered in the API's error shape with its security headers, not Node's bare
 * one, and its connection closed as Node closes it.
 */
export function createHttpServer(listener: RequestListener, options: ServerOptions = {}): Server {
  const server = createServer({ ...NODE_SERVER_OPTIONS, ...options }, listener);
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    // An answer already under way on this connection (a download) is not cut by another.
    const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })
      ._httpMessage;
    if (error.code === "ECONNRESET" || !socket.writable || answering?.headersSent === true) {
      socket.destroy();
      return;
    }
    // Destroyed once written: ending only this side leaves a socket whose client never ends its
    // own (half a request, timed out) open, with no timeout on it any more.
    socket.end(clientErrorAnswer(clientErrorOf(error.code)), () => socket.destroy());
  });
  return server;
}

/**
 * Writes an answer `jsonResponse` made straight from its encoded text. The adapter would read the
 * body back through the Response's web stream, which costs more than the rest of a small answer.
 * Anything else (HEAD, a stream, cookies, which the adapter keeps apart) is left to the adapter.
 */
function writeEncodedJson(response: Response, outgoing: ServerResponse): boolean {
  const body = encodedJsonOf(response);
  if (body === undefined || response.headers.has("set-cookie")) return false;
  const headers: Record<string, string> = {};
  for (const [key, value] of response.headers) headers[key] = value;
  headers["content-length"] = String(Buffer.byteLength(body));
  outgoing.writeHead(response.status, headers);
  outgoing.end(body);
  return true;
}

/** Marks the bindings of a request this listener serves: it lets the router write answers later. */
const WRITES_DEFERRED_ANSWERS = Symbol("writesDeferredAnswers");

/** The response the router returns for an answer it will write itself, through `answerWriterOf`. */
export const ANSWERED_LATER = RESPONSE_ALREADY_SENT;

function outgoingOf(env: unknown): ServerResponse | undefined {
  if (typeof env !== "object" || env === null || !(WRITES_DEFERRED_ANSWERS in env))
    return undefined;
  const { outgoing } = env as { outgoing?: unknown };
  return outgoing instanceof ServerResponse ? outgoing : undefined;
}

/**
 * How a waiting route hears its client leave, when this listener serves the request: from the
 * response closing rather than from the request's signal (lib/http/client-gone.ts). Undefined
 * otherwise; the route then reads the request's own signal.
 */
export function clientGoneIn(env: unknown): ClientGone | undefined {
  const outgoing = outgoingOf(env);
  return outgoing && clientGoneOf(outgoing);
}

/**
 * When this listener serves the request: a function that writes its answer, passed through
 * `finish`, whenever it comes; the router then answers `ANSWERED_LATER` at once. While a long-poll
 * waits, the router's and the adapter's state for the request (Hono's context, the frames and
 * reactions awaiting the answer) is let go: issue 18 measured it at more than the connection
 * itself. Undefined otherwise.
 */
export function answerWriterOf(
  env: unknown,
  finish: (answer: Response) => Response,
): ((answer: Response) => void) | undefined {
  const outgoing = outgoingOf(env);
  return outgoing && ((answer) => writeDeferredAnswerOrClose(finish, answer, outgoing));
}

/**
 * When this listener serves the request: a function that lets go of its headers, for a route to
 * call once it has read all it will of them (it starts a long-poll, having kept who asked:
 * decision 086). Node holds the request for the whole wait (its response and its connection's
 * parser refer to it), and with it every header twice: as sent (`rawHeaders`) and as the object
 * `headers` builds when first read (the client address's stamp in server.ts reads it). Node read
 * what it needs of them (keep-alive, the method) before the route ran. Undefined otherwise.
 */
export function headersReleaseOf(env: unknown): (() => void) | undefined {
  const incoming = outgoingOf(env)?.req;
  return (
    incoming &&
    (() => {
      incoming.rawHeaders = [];
      incoming.headers = {};
    })
  );
}

/**
 * An answer that cannot be finished or written closes its connection, so its client is not left
 * waiting for one.
 */
function writeDeferredAnswerOrClose(
  finish: (answer: Response) => Response,
  answer: Response,
  outgoing: ServerResponse,
): void {
  try {
    writeDeferredAnswer(finish(answer), outgoing);
  } catch (error) {
    console.error("[api] a deferred answer could not be written", error);
    outgoing.destroy();
  }
}

/** Writes a deferred answer; one that is not encoded JSON is read and written as it is. */
function writeDeferredAnswer(answer: Response, outgoing: ServerResponse): void {
  if (writeEncodedJson(answer, outgoing)) return;
  void answer.arrayBuffer().then(
    (body) => {
      outgoing.writeHead(answer.status, [...answer.headers].flat());
      outgoing.end(Buffer.from(body));
    },
    (error: unknown) => {
      console.error("[api] a deferred answer could not be read", error);
      outgoing.destroy();
    },
  );
}

/**
 * Removes the `close` listeners added to a response whose answer is deferred after the first
 * `before`, but the wait's own: the adapter's, attached once the router has returned. It would
 * abort the request's signal when the client leaves, which a deferred answer does not read (its
 * wait hears the response close itself, lib/http/client-gone.ts), and it holds the request, with
 * a copy of every header, for the whole wait: a tenth of what an open long-poll holds (decision
 * 086). Node's own, added before the listener ran, stay.
 */
function dropListenersSince(outgoing: ServerResponse, before: number): void {
  for (const listener of outgoing.listeners("close").slice(before)) {
    if (!isClientGoneListener(listener)) outgoing.off("close", listener as () => void);
  }
}

/**
 * The API's router as a `node:http` listener (server.ts, and the tests' API server). Globals stay
 * Node's own: Next runs in the same process (decision 016).
 */
export function createNodeListener(app: Hono) {
  return getRequestListener(
    (request, bindings) => {
      const { outgoing } = bindings;
      if (!(outgoing instanceof ServerResponse)) return app.fetch(request, bindings);
      const env = { ...bindings, [WRITES_DEFERRED_ANSWERS]: true };
      const closeListeners = outgoing.listenerCount("close");
      return Promise.resolve(app.fetch(request, env)).then((response) => {
        if (response === ANSWERED_LATER) dropListenersSince(outgoing, closeListeners);
        return writeEncodedJson(response, outgoing) ? RESPONSE_ALREADY_SENT : response;
      });
    },
    {
      overrideGlobalObjects: false,
      // A request the adapter cannot make a web Request of (a malformed Host, a backslash in the
      // path) got an empty 400 without the API's headers. The router's answers never reject; one
      // that did is logged like any error nothing answered.
      errorHandler: (error) =>
        error instanceof RequestError
          ? withApiHeaders(
              errorResponse(
                new AppError("INVALID_INPUT", `the request cannot be read: ${error.message}`),
              ),
            )
          : internalError(error),
    },
  );
}
