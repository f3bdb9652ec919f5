import { errorBodySchema } from "../api/error";
import { readSessionKey, SESSION_KEY_HEADER } from "../auth/session-key";

/**
 * A refusal from /api/v1: its HTTP status, its typed code, its message and the full error body.
 * The console, the agents and the CLI all see the same class (the SDK calls it `ApiError`).
 */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly error: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ApiRequestError";
  }
}

/**
 * A same-origin call from the console, as sent: the session cookie rides along, and the session's
 * key goes beside it, without which the cookie counts for nothing (decision 080).
 */
export function consoleFetch(
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<Response> {
  const key = readSessionKey();
  return fetch(`/api/v1${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: {
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      ...(key === null ? {} : { [SESSION_KEY_HEADER]: key }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    credentials: "same-origin",
  });
}

/** Same-origin JSON calls from the console. */
export async function apiFetch<T>(
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<T> {
  return readApiResponse<T>(await consoleFetch(path, init));
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return undefined;
  }
}

/** The JSON body of an /api/v1 answer, or its refusal as an ApiRequestError. */
export async function readApiResponse<T>(response: Response): Promise<T> {
  return parseApiAnswer<T>(response.status, response.statusText, await response.text());
}

/** `readApiResponse` for an answer already read by a client that is not `fetch` (the SDK's). */
export function parseApiAnswer<T>(status: number, statusText: string, text: string): T {
  const json = parseJson(text);
  if (status < 200 || status > 299) {
    const body = errorBodySchema.safeParse(json);
    throw new ApiRequestError(
      status,
      body.success ? body.data.error.code : "UNKNOWN",
      body.success ? body.data.error.message : statusText,
      body.success ? body.data.error : {},
    );
  }
  if (json === undefined) {
    throw new ApiRequestError(status, "INVALID_RESPONSE", "the answer was not JSON", {});
  }
  return json as T;
}
