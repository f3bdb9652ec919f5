import { readApiResponse } from "../sdk/errors";

/** A refusal from /api/v1 as the browser sees it: the same typed error every SDK client gets. */
export { ApiError as ApiRequestError } from "../sdk/errors";

/** Same-origin JSON calls from the console; the session cookie rides along. */
export async function apiFetch<T>(
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<T> {
  const response = await fetch(`/api/v1${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: init.body === undefined ? {} : { "content-type": "application/json" },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    credentials: "same-origin",
  });
  return readApiResponse<T>(response);
}
