/** A refusal from /api/v1 as the browser sees it: the typed code and the full error body. */
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

/** The JSON body of an /api/v1 answer, or its refusal as an ApiRequestError. */
export async function readApiResponse<T>(response: Response): Promise<T> {
  const text = await response.text();
  const json = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  if (!response.ok) {
    const error = (json.error ?? {}) as Record<string, unknown>;
    throw new ApiRequestError(
      response.status,
      String(error.code ?? "UNKNOWN"),
      String(error.message ?? response.statusText),
      error,
    );
  }
  return json as T;
}
