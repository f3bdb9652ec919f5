import { ApiRequestError, readApiResponse } from "../lib/shared/http/api-fetch";

/** A refusal from the API, with its typed code: the same error class the console uses. */
export { ApiRequestError as ApiError };

const RETRYABLE_NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "UND_ERR_SOCKET",
  "ETIMEDOUT",
]);

function backOff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(200 * 2 ** attempt, 2_000)));
}

function isRetryable(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } } | null)?.cause;
  return error instanceof TypeError && RETRYABLE_NETWORK_CODES.has(cause?.code ?? "");
}

/**
 * JSON over HTTP with a bearer token, exactly as an external client in any language would call
 * Handshake. Network failures (a server restarting) are retried with backoff; refusals are not,
 * they are answers.
 */
export class HttpTransport {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly maxRetries = 20,
  ) {}

  async call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await fetch(`${this.baseUrl}/api/v1${path}`, {
          method,
          headers: {
            authorization: `Bearer ${this.token}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: signal ?? null,
        });
      } catch (error) {
        if (!isRetryable(error) || attempt >= this.maxRetries || signal?.aborted) throw error;
        await backOff(attempt);
        continue;
      }
      // 503 means the server is up but its database is not: wait and ask again, like a refused
      // connection. (Only idempotent or keyed requests reach a 503 without having changed anything.)
      if (response.status === 503 && attempt < this.maxRetries && !signal?.aborted) {
        await response.body?.cancel();
        await backOff(attempt);
        continue;
      }
      return readApiResponse<T>(response);
    }
  }
}
