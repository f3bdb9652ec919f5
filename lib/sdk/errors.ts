import { errorBodySchema } from "../shared/api/error";

/** A refusal from /api/v1: its HTTP status, its typed code, its message and the full error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly error: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** The server could not be reached at all (refused, reset, DNS) or did not answer in time. */
export class UnreachableError extends Error {
  constructor(
    readonly url: string,
    override readonly cause: unknown,
  ) {
    super(`Handshake at ${url} is unreachable (${describeCause(cause)})`);
    this.name = "UnreachableError";
  }
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { cause?: { code?: string } }).cause?.code;
    if (cause.name === "TimeoutError") return "no answer in time";
    return code ?? cause.message;
  }
  return String(cause);
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return undefined;
  }
}

/** The JSON body of an /api/v1 answer, or its refusal as an ApiError. */
export async function readApiResponse<T>(response: Response): Promise<T> {
  const json = parseJson(await response.text());
  if (!response.ok) {
    const body = errorBodySchema.safeParse(json);
    const error: Record<string, unknown> = body.success ? body.data.error : {};
    throw new ApiError(
      response.status,
      body.success ? body.data.error.code : "UNKNOWN",
      body.success ? body.data.error.message : response.statusText,
      error,
    );
  }
  if (json === undefined) {
    throw new ApiError(response.status, "INVALID_RESPONSE", "the answer was not JSON", {});
  }
  return json as T;
}
