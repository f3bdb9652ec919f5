import { ServerResponse } from "node:http";
import { getRequestListener } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Hono } from "hono";
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

/**
 * The API's router as a `node:http` listener (server.ts, and the tests' API server). Globals stay
 * Node's own: Next runs in the same process (decision 016).
 */
export function createNodeListener(app: Hono) {
  return getRequestListener(
    // A `.then` rather than an async function: a long-poll is held for its whole wait in every
    // frame on the way to it, and a pending `.then` holds less than a suspended async frame.
    (request, bindings) =>
      Promise.resolve(app.fetch(request, bindings)).then((response) => {
        const { outgoing } = bindings;
        return outgoing instanceof ServerResponse && writeEncodedJson(response, outgoing)
          ? RESPONSE_ALREADY_SENT
          : response;
      }),
    { overrideGlobalObjects: false },
  );
}
