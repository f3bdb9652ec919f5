import { mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { RUNNING_FILES, type RunningFile } from "./vitest-running-files";
import { formatProcesses, type StalledProcess } from "./watched-run";

// What a stalled test run is waiting on, read before it is killed (decision 081): which processes
// stand and where the kernel holds them, what each Node process's event loop still waits for, and
// what the database's sessions are doing.

const REPORT_WAIT_MS = 5_000;
/** No one part may hold back the others: each says what it found, or that it could not. */
const PART_LIMIT_MS = 15_000;
const DATABASE_WAIT_MS = 5_000;

type NodeReport = {
  header?: { processId?: number };
  javascriptStack?: { stack?: string[] };
  libuv?: {
    type: string;
    is_active?: boolean;
    is_referenced?: boolean;
    remoteEndpoint?: { host?: string; port?: number };
    firesInMsFromNow?: number;
    pid?: number;
  }[];
};

function describeHandle(handle: NonNullable<NodeReport["libuv"]>[number]): string {
  if (handle.remoteEndpoint) return `${handle.type} to :${handle.remoteEndpoint.port}`;
  if (handle.firesInMsFromNow !== undefined) return `timer in ${handle.firesInMsFromNow} ms`;
  if (handle.pid !== undefined) return `child ${handle.pid}`;
  return handle.type;
}

function summariseReport(report: NodeReport): string {
  const waitingOn = (report.libuv ?? [])
    .filter((handle) => handle.is_active && handle.is_referenced && handle.type !== "loop")
    .map(describeHandle);
  const stack = (report.javascriptStack?.stack ?? []).slice(0, 6).map((frame) => frame.trim());
  return [
    `process ${report.header?.processId ?? "?"} waits on: ${waitingOn.join(", ") || "nothing"}`,
    ...(stack.length ? [`  running: ${stack.join(" ← ")}`] : []),
  ].join("\n");
}

/** Where a process started with --report-on-signal writes: as its flag says, or its own cwd. */
function reportDirectoryOf(found: StalledProcess): string {
  const flag = found.args.find((arg) => arg.startsWith("--report-directory="));
  if (flag) return flag.slice("--report-directory=".length);
  try {
    return readlinkSync(`/proc/${found.pid}/cwd`);
  } catch {
    return process.cwd();
  }
}

function reportsIn(directory: string): string[] {
  return readdirSync(directory).filter((file) => /^report\..*\.json$/.test(file));
}

async function nodeReports(processes: StalledProcess[]): Promise<string> {
  const reporting = processes.filter((found) => found.args.includes("--report-on-signal"));
  if (reporting.length === 0) return "no process of the run writes Node reports";
  const directories = [...new Set(reporting.map(reportDirectoryOf))];
  const before = new Set<string>();
  for (const directory of directories) {
    mkdirSync(directory, { recursive: true });
    for (const file of reportsIn(directory)) before.add(path.join(directory, file));
  }
  for (const found of reporting) {
    try {
      process.kill(found.pid, "SIGUSR2");
    } catch {
      // Ended since the tree was read: it is named below as silent.
    }
  }
  await new Promise((resolve) => setTimeout(resolve, REPORT_WAIT_MS));
  const files = directories
    .flatMap((directory) => reportsIn(directory).map((file) => path.join(directory, file)))
    .filter((file) => !before.has(file));
  const reports = files.flatMap((file) => {
    try {
      return [JSON.parse(readFileSync(file, "utf8")) as NodeReport];
    } catch {
      return []; // Still being written: its process is named below as silent.
    }
  });
  // A report holds the process's whole environment, secrets too: read, it has no more use.
  for (const file of files) rmSync(file, { force: true });
  const silent = reporting.filter(
    (found) => !reports.some((report) => report.header?.processId === found.pid),
  );
  return [
    ...reports.map(summariseReport),
    ...silent.map(
      (found) =>
        `process ${found.pid} wrote no report within ${REPORT_WAIT_MS / 1000} s: its event loop ` +
        "is busy or stuck",
    ),
  ].join("\n");
}

async function databaseActivity(adminUrl: string): Promise<string> {
  const client = new pg.Client({
    connectionString: adminUrl,
    connectionTimeoutMillis: DATABASE_WAIT_MS,
    query_timeout: DATABASE_WAIT_MS,
  });
  try {
    await client.connect();
    const { rows } = await client.query<{ line: string }>(
      `SELECT format('%s %s on %s, %s%s for %s: %s', pid, state, datname,
                     coalesce(wait_event_type || '/' || wait_event, 'not waiting'),
                     CASE WHEN cardinality(pg_blocking_pids(pid)) > 0
                          THEN ' behind ' || array_to_string(pg_blocking_pids(pid), ',') END,
                     date_trunc('second', now() - coalesce(xact_start, state_change)),
                     left(regexp_replace(query, '\\s+', ' ', 'g'), 160)) AS line
         FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND state <> 'idle' AND pid <> pg_backend_pid()
        ORDER BY xact_start NULLS LAST`,
    );
    return rows.map((row) => row.line).join("\n") || "no database session is busy";
  } catch (error) {
    return `the database did not say: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function runningTestFiles(): string {
  let running: RunningFile[];
  try {
    running = JSON.parse(readFileSync(RUNNING_FILES, "utf8")) as RunningFile[];
  } catch {
    return "none known";
  }
  const root = path.resolve(import.meta.dirname, "..");
  return (
    running
      .map(({ file, since }) => {
        const seconds = Math.round((Date.now() - since) / 1000);
        return `${path.relative(root, file)}, for ${seconds} s`;
      })
      .join("\n") || "none"
  );
}

/** Runs one part of the description; whatever goes wrong in it, the others still speak. */
async function part(title: string, read: () => Promise<string> | string): Promise<string> {
  const said = await Promise.race([
    Promise.resolve()
      .then(read)
      .catch((error: unknown) => `(could not read: ${String(error)})`),
    new Promise<string>((resolve) =>
      setTimeout(
        () => resolve(`(nothing within ${PART_LIMIT_MS / 1000} s)`),
        PART_LIMIT_MS,
      ).unref(),
    ),
  ]);
  return `${title}:\n${said}`;
}

export async function describeTestStall(
  processes: StalledProcess[],
  adminUrl: string | undefined,
): Promise<string> {
  const isVitest = processes.some((found) => found.commandLine.includes("vitest"));
  const parts = await Promise.all([
    ...(isVitest ? [part("vitest files running", runningTestFiles)] : []),
    part("processes", () => formatProcesses(processes)),
    part("Node reports", () => nodeReports(processes)),
    part("database sessions not idle", () =>
      adminUrl ? databaseActivity(adminUrl) : "no database to ask",
    ),
  ]);
  return parts.join("\n");
}
