import type { z } from "zod";
import { readApiResponse } from "../shared/http/api-fetch";
import { ApiError, UnreachableError } from "./errors";

const RETRYABLE_NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "UND_ERR_SOCKET",
  "ETIMEDOUT",
]);

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

function isNetworkFailure(error: unknown): boolean {
  return error instanceof TypeError || (error instanceof Error && error.name === "TimeoutError");
}

function isRetryable(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } } | null)?.cause;
  return error instanceof TypeError && RETRYABLE_NETWORK_CODES.has(cause?.code ?? "");
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
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        const timeout = AbortSignal.timeout(timeoutMs);
        response = await fetch(`${this.baseUrl}/api/v1${path}`, {
          method,
          headers: {
            authorization: `Bearer ${this.token}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (error) {
        if (signal?.aborted) throw error;
        if (isRetryable(error) && attempt < this.maxRetries) {
          await backOff(attempt);
          continue;
        }
        if (isNetworkFailure(error)) throw new UnreachableError(this.baseUrl, error);
        throw error;
      }
      // 503 means the server is up but its database is not: wait and ask again, like a refused
      // connection. (Only idempotent or keyed requests reach a 503 without having changed anything.)
      if (response.status === 503 && attempt < this.maxRetries && !signal?.aborted) {
        await response.body?.cancel();
        await backOff(attempt);
        continue;
      }
      const json = await readApiResponse<unknown>(response);
      const parsed = schema.safeParse(json);
      if (!parsed.success) {
        throw new ApiError(
          response.status,
          "INVALID_RESPONSE",
          `unexpected answer from ${method} ${path}: ${parsed.error.message}`,
          {},
        );
      }
      return parsed.data;
    }
  }
}
