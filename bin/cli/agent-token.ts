import { HandshakeClient } from "../../lib/sdk/agent-client";
import { ApiError } from "../../lib/sdk/errors";
import type { TransportOptions } from "../../lib/sdk/transport";
import type { RegisteredAgent } from "../../lib/shared/api/agent";
import { forgetCachedAgent, loadCachedAgent, saveCachedAgent, type Connection } from "./config";

/** The connect token cannot act as an agent, or the server refused it: which one, in words. */
export class ConnectRefusedError extends Error {
  constructor(readonly refusal: ApiError) {
    super(`Handshake refused the connect token (${refusal.code}: ${refusal.message})`);
    this.name = "ConnectRefusedError";
  }
}

/**
 * Runs `act` as the agent stored under `key`, obtaining (and caching, 0600) its token through the
 * connect token the first time. A cached token the server refuses (revoked, agent replaced) is
 * dropped and obtained once more; a refusal after that is final.
 */
export async function actAsAgent<T>(
  connection: Connection,
  key: string,
  obtain: () => Promise<RegisteredAgent>,
  act: (client: HandshakeClient) => Promise<T>,
  options: TransportOptions,
): Promise<T> {
  const cached = await loadCachedAgent(connection, key);
  if (cached) {
    try {
      return await act(new HandshakeClient(connection.url, cached.token, options));
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 401)) throw error;
      await forgetCachedAgent(connection, key);
    }
  }
  let registered: RegisteredAgent;
  try {
    registered = await obtain();
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      throw new ConnectRefusedError(error);
    }
    throw error;
  }
  await saveCachedAgent(connection, key, { name: registered.agent.name, token: registered.token });
  return act(new HandshakeClient(connection.url, registered.token, options));
}
