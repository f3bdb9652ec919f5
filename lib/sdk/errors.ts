import { ApiRequestError } from "../shared/http/api-fetch";

/** A refusal from /api/v1, as every SDK client throws it (the console's class, by another name). */
export { ApiRequestError as ApiError };

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
    if (cause.name === "TimeoutError") return "no answer in time";
    const code = (cause as { code?: unknown }).code;
    return typeof code === "string" ? code : cause.message;
  }
  return String(cause);
}
