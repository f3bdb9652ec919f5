import pg from "pg";

/**
 * A dedicated connection that LISTENs on one channel: the event bridge's and the actor cache's.
 * Its loss is reported through `onDrop` (error or end), which the caller answers by reconnecting;
 * a connection that fails before it listens is closed and the error thrown.
 */
export async function openListenClient(options: {
  databaseUrl: string;
  applicationName: string;
  channel: string;
  connectTimeoutMs: number;
  /** Bounds every query on the connection, LISTEN included: a slower answer means a dead one. */
  queryTimeoutMs: number;
  onNotification: (message: pg.Notification) => void;
  onDrop: (client: pg.Client, reason: string) => void;
}): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: options.databaseUrl,
    application_name: options.applicationName,
    connectionTimeoutMillis: options.connectTimeoutMs,
    query_timeout: options.queryTimeoutMs,
    keepAlive: true,
  });
  // Registered before connecting: an unhandled "error" event would crash the process.
  client.on("error", (error) => options.onDrop(client, error.message));
  client.on("end", () => options.onDrop(client, "connection ended"));
  client.on("notification", options.onNotification);
  try {
    await client.connect();
    await client.query(`LISTEN ${options.channel}`);
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return client;
}
