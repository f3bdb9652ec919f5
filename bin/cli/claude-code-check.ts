import { z } from "zod";
import { ApiError, UnreachableError } from "../../lib/sdk/errors";
import { HttpTransport } from "../../lib/sdk/transport";
import { loadConnection } from "./config";

export type CheckResult = { isOk: boolean; lines: string[] };

/**
 * Is the server there, and does it take the stored token as a `connect` token? A `connect` token
 * may not list agents, so the server's refusal names the token's scope without changing anything.
 */
export async function checkConnection(): Promise<CheckResult> {
  const connection = await loadConnection();
  if (!connection) {
    return {
      isOk: false,
      lines: ["not set up: run `handshake claude-code install --url URL --token TOKEN`"],
    };
  }
  const transport = new HttpTransport(connection.url, connection.token, {
    maxRetries: 0,
    timeoutMs: 5_000,
  });
  try {
    await transport.call("GET", "/health", z.unknown());
  } catch (error) {
    if (error instanceof UnreachableError) return { isOk: false, lines: [error.message] };
    if (!(error instanceof ApiError)) throw error;
  }
  const lines = [`server: ${connection.url} answers`];
  try {
    await transport.call("GET", "/agents", z.unknown());
    return {
      isOk: false,
      lines: [
        ...lines,
        "token: accepted, but it is not a `connect` token; create one with scope connect",
      ],
    };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const scope = error.error.scope;
    if (error.code === "INSUFFICIENT_SCOPE" && scope === "connect") {
      return { isOk: true, lines: [...lines, "token: a valid `connect` token"] };
    }
    return {
      isOk: false,
      lines: [...lines, `token: refused (${error.code}: ${error.message})`],
    };
  }
}
