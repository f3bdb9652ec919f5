import pg from "pg";
import { now, sleep } from "./stats";

/**
 * The raw PostgreSQL floor: what the same database does for the same shape of work with nothing
 * between the client and PostgreSQL but the `pg` driver. Tables live beside Handshake's in the
 * scratch database under a `raw_` prefix, on channels Handshake's bridge does not listen to.
 */
export const RAW_SCHEMA_SQL = `
CREATE TABLE raw_plain (
  id         bigserial PRIMARY KEY,
  agent      text NOT NULL,
  payload    jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE raw_notified (LIKE raw_plain INCLUDING ALL);
CREATE FUNCTION raw_notify() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('raw_bench', NEW.id::text);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER raw_notified_notify AFTER INSERT ON raw_notified
  FOR EACH ROW EXECUTE FUNCTION raw_notify();

-- The loop: an "agent" inserts a pending row (NOTIFY raw_loop_request), a "lead" decides it
-- (NOTIFY raw_loop_decision), the agent sees the decision.
CREATE TABLE raw_loop (
  id         bigserial PRIMARY KEY,
  agent      text NOT NULL,
  status     text NOT NULL DEFAULT 'pending',
  payload    jsonb NOT NULL,
  decided_at timestamptz
);
CREATE FUNCTION raw_loop_notify() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM pg_notify('raw_loop_request', NEW.id::text);
  ELSE
    PERFORM pg_notify('raw_loop_decision', NEW.id::text);
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER raw_loop_notify AFTER INSERT OR UPDATE ON raw_loop
  FOR EACH ROW EXECUTE FUNCTION raw_loop_notify();
`;

async function connect(url: string, name: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: name });
  await client.connect();
  return client;
}

export async function createRawSchema(url: string): Promise<void> {
  const client = await connect(url, "bench-raw-setup");
  try {
    await client.query(RAW_SCHEMA_SQL);
  } finally {
    await client.end();
  }
}

const PAYLOAD = JSON.stringify({ plan: "raw floor: a plan of about the size an agent sends" });

/**
 * Autocommitted `INSERT … RETURNING id` per statement on `connections` connections for
 * `durationMs`; with `isNotified`, the table's trigger NOTIFYs each id and one more connection
 * LISTENs (as Handshake's bridge does), so the notification queue is really drained.
 */
export async function measureInsertRate(
  url: string,
  options: { connections: number; durationMs: number; isNotified: boolean },
): Promise<number> {
  const table = options.isNotified ? "raw_notified" : "raw_plain";
  const clients = await Promise.all(
    Array.from({ length: options.connections }, (_, index) => connect(url, `bench-raw-${index}`)),
  );
  const listener = options.isNotified ? await connect(url, "bench-raw-listener") : null;
  try {
    let received = 0;
    listener?.on("notification", () => (received += 1));
    await listener?.query("LISTEN raw_bench");
    const sql = `INSERT INTO ${table} (agent, payload) VALUES ($1, $2) RETURNING id`;
    // Warm up: plan caching, first-page allocation.
    await Promise.all(clients.map((client) => client.query(sql, ["warm", PAYLOAD])));
    let count = 0;
    const started = now();
    const deadline = started + options.durationMs;
    await Promise.all(
      clients.map(async (client, index) => {
        const agent = `agent-${index}`;
        while (now() < deadline) {
          await client.query(sql, [agent, PAYLOAD]);
          count += 1;
        }
      }),
    );
    const elapsedS = (now() - started) / 1000;
    return count / elapsedS;
  } finally {
    await Promise.all([...clients, ...(listener ? [listener] : [])].map((c) => c.end()));
  }
}

/**
 * NOTIFY latency: the time from sending an autocommitted `SELECT pg_notify(…)` (so parse, commit
 * and the queue signal are included) to the listening connection's client receiving it.
 */
export async function measureNotifyLatency(url: string, samples: number): Promise<number[]> {
  const sender = await connect(url, "bench-notify-sender");
  const listener = await connect(url, "bench-notify-listener");
  try {
    let waiting: { payload: string; resolve: (at: number) => void } | null = null;
    listener.on("notification", (message) => {
      const at = now();
      if (waiting && message.payload === waiting.payload) waiting.resolve(at);
    });
    await listener.query("LISTEN raw_latency");
    const latencies: number[] = [];
    for (let index = -20; index < samples; index++) {
      const payload = String(index);
      const received = new Promise<number>((resolve) => (waiting = { payload, resolve }));
      const sentAt = now();
      await sender.query("SELECT pg_notify('raw_latency', $1)", [payload]);
      const receivedAt = await withTimeout(received, 5_000, "raw NOTIFY never arrived");
      if (index >= 0) latencies.push(receivedAt - sentAt);
      // Pace like the Handshake measurement does (one at a time, a short breath between).
      await sleep(0);
    }
    return latencies;
  } finally {
    await Promise.all([sender.end(), listener.end()]);
  }
}

/**
 * The raw agent → server → decision → agent loop, over LISTEN/NOTIFY only: the agent inserts a
 * pending row (its trigger NOTIFYs), the "lead" connection hears it and updates the row to
 * approved (NOTIFY again), the agent's listening connection hears the decision.
 */
export async function measureRawLoop(url: string, loops: number): Promise<number[]> {
  const agentWriter = await connect(url, "bench-loop-agent");
  const agentListener = await connect(url, "bench-loop-agent-listener");
  const lead = await connect(url, "bench-loop-lead");
  try {
    lead.on("notification", (message) => {
      void lead
        .query(
          "UPDATE raw_loop SET status = 'approved', decided_at = now() WHERE id = $1 AND status = 'pending'",
          [message.payload],
        )
        .catch((error: unknown) => console.error("[bench] raw lead update failed", error));
    });
    await lead.query("LISTEN raw_loop_request");
    let waiting: { id: string; resolve: (at: number) => void } | null = null;
    const early = new Map<string, number>();
    agentListener.on("notification", (message) => {
      const at = now();
      const id = message.payload ?? "";
      if (waiting?.id === id) waiting.resolve(at);
      else early.set(id, at);
    });
    await agentListener.query("LISTEN raw_loop_decision");
    const latencies: number[] = [];
    for (let index = -10; index < loops; index++) {
      const startedAt = now();
      const { rows } = await agentWriter.query<{ id: string }>(
        "INSERT INTO raw_loop (agent, payload) VALUES ($1, $2) RETURNING id",
        ["loop-agent", PAYLOAD],
      );
      const id = String(rows[0]?.id);
      const decidedAt =
        early.get(id) ??
        (await withTimeout(
          new Promise<number>((resolve) => (waiting = { id, resolve })),
          5_000,
          "raw loop decision never arrived",
        ));
      early.delete(id);
      waiting = null;
      if (index >= 0) latencies.push(decidedAt - startedAt);
      await sleep(0);
    }
    return latencies;
  } finally {
    await Promise.all([agentWriter.end(), agentListener.end(), lead.end()]);
  }
}

/** p50/p99 of running the same SQL as a Handshake endpoint, straight through `pg`. */
export async function measureQueryLatency(
  url: string,
  sql: string,
  params: unknown[],
  samples: number,
): Promise<number[]> {
  const client = await connect(url, "bench-raw-query");
  try {
    for (let index = 0; index < 5; index++) await client.query(sql, params);
    const latencies: number[] = [];
    for (let index = 0; index < samples; index++) {
      const startedAt = now();
      await client.query(sql, params);
      latencies.push(now() - startedAt);
    }
    return latencies;
  } finally {
    await client.end();
  }
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${message} (after ${ms} ms)`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
