import { ServerResponse } from "node:http";
import { getRequestListener } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Hono } from "hono";
import { clientGoneOf, type ClientGone } from "./client-gone";
import { encodedJsonOf } from "./route";

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

/** Marks the bindings of a request this listener serves: it writes deferred answers itself. */
const WRITES_DEFERRED_ANSWERS = Symbol("writesDeferredAnswers");

// A long-poll's answer to come, by the placeholder the router answered with at once.
const deferredAnswers = new WeakMap<Response, Promise<Response>>();

/** Whether the router may answer this request with `deferAnswer` (its env came from here). */
export function writesDeferredAnswers(env: unknown): boolean {
  return typeof env === "object" && env !== null && WRITES_DEFERRED_ANSWERS in env;
}

/**
 * How a waiting route hears its client leave, when this listener serves the request: from the
 * response closing rather than from the request's signal (lib/http/client-gone.ts). Undefined
 * otherwise; the route then reads the request's own signal.
 */
export function clientGoneIn(env: unknown): ClientGone | undefined {
  if (!writesDeferredAnswers(env)) return undefined;
  const { outgoing } = env as { outgoing?: unknown };
  return outgoing instanceof ServerResponse ? clientGoneOf(outgoing) : undefined;
}

/**
 * A placeholder for an answer still to come, which the node listener writes when it does. While
 * a long-poll waits, the router's and the adapter's state for the request (Hono's context, its
 * request wrapper, the frames awaiting the answer) is then let go: issue 18 measured it at more
 * than the connection itself. Never written: the listener writes `answer` instead.
 */
export function deferAnswer(answer: Promise<Response>): Response {
  const placeholder = new Response(null, { status: 500 });
  deferredAnswers.set(placeholder, answer);
  return placeholder;
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
 * The API's router as a `node:http` listener (server.ts, and the tests' API server). Globals stay
 * Node's own: Next runs in the same process (decision 016).
 */
export function createNodeListener(app: Hono) {
  return getRequestListener(
    // A `.then` rather than an async function: a long-poll is held for its whole wait in every
    // frame on the way to it, and a pending `.then` holds less than a suspended async frame.
    (request, bindings) => {
      const { outgoing } = bindings;
      if (!(outgoing instanceof ServerResponse)) return app.fetch(request, bindings);
      const env = { ...bindings, [WRITES_DEFERRED_ANSWERS]: true };
      return Promise.resolve(app.fetch(request, env)).then((response) => {
        const deferred = deferredAnswers.get(response);
        if (deferred !== undefined) {
          void deferred.then((answer) => writeDeferredAnswer(answer, outgoing));
          return RESPONSE_ALREADY_SENT;
        }
        return writeEncodedJson(response, outgoing) ? RESPONSE_ALREADY_SENT : response;
      });
    },
    { overrideGlobalObjects: false },
  );
}
