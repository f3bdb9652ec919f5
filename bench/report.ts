import { readFile, writeFile } from "node:fs/promises";
import type { Sizes } from "./config";
import { HOT_PATHS, type HotPath, type HotPathProfiles, type Share } from "./profile";
import { RSS_INTERVAL_MS, RSS_MAX_WAIT_MS, RSS_TOLERANCE_MIB, RSS_WINDOW } from "./rss";

export type Verdict = "met" | "not met" | "—";

/**
 * A goal read from a load of calls: met only if none of them failed. A refused call (a 429) is
 * answered without the work the goal is about, so its speed says nothing of that work.
 */
export function loadVerdict(isMet: boolean, failedCalls: number): Verdict {
  return isMet && failedCalls === 0 ? "met" : "not met";
}

/**
 * Whether a latency is within its line, both in milliseconds, compared in whole microseconds: the
 * bench rounds its percentiles to the microsecond, and a line made from them in floating point
 * (0.36 + 1.5 = 1.8599999…) would otherwise refuse a figure equal to it.
 */
export function isWithinMs(valueMs: number, lineMs: number): boolean {
  return Math.round(valueMs * 1000) <= Math.round(lineMs * 1000);
}

export type TableRow = {
  goal: string;
  target: string;
  raw: string;
  handshake: string;
  ratio: string;
  verdict: Verdict;
  /** The same figure and ratio measured on the baseline commit in the same run. */
  before?: string;
};

const HEADERS = ["Goal", "Target", "Raw floor", "Handshake", "Ratio", "Result"] as const;

function headersOf(rows: readonly TableRow[]): string[] {
  return rows.some((row) => row.before !== undefined)
    ? ["Goal", "Target", "Raw floor", "Before (baseline)", "Handshake", "Ratio", "Result"]
    : [...HEADERS];
}

function cells(row: TableRow, hasBefore: boolean): string[] {
  return hasBefore
    ? [row.goal, row.target, row.raw, row.before ?? "—", row.handshake, row.ratio, row.verdict]
    : [row.goal, row.target, row.raw, row.handshake, row.ratio, row.verdict];
}

export function renderTextTable(rows: readonly TableRow[]): string {
  const HEADERS = headersOf(rows);
  const hasBefore = HEADERS.length > 6;
  const widths = HEADERS.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (cells(row, hasBefore)[column] ?? "").length)),
  );
  const line = (values: readonly string[]) =>
    values.map((value, column) => value.padEnd(widths[column] ?? 0)).join(" │ ");
  const rule = widths.map((width) => "─".repeat(width)).join("─┼─");
  return [line(HEADERS), rule, ...rows.map((row) => line(cells(row, hasBefore)))].join("\n");
}

export function renderMarkdownTable(rows: readonly TableRow[]): string {
  const HEADERS = headersOf(rows);
  const hasBefore = HEADERS.length > 6;
  const escape = (value: string) => value.replaceAll("|", "\\|");
  return [
    `| ${HEADERS.join(" | ")} |`,
    `|${HEADERS.map(() => "---").join("|")}|`,
    ...rows.map((row) => `| ${cells(row, hasBefore).map(escape).join(" | ")} |`),
  ].join("\n");
}

export type Machine = {
  nproc: number;
  cpu: string;
  memoryGiB: number;
  node: string;
  postgres: string;
  loadAverageAtStart: number[];
};

export async function writePerformanceDoc(options: {
  path: string;
  date: string;
  commit: string;
  machine: Machine;
  durationS: number;
  resultsFile: string;
  rows: readonly TableRow[];
  notes: readonly string[];
  sizes: Sizes;
  profiles?: ProfilesOfRun | undefined;
}): Promise<void> {
  const { machine, sizes } = options;
  const text = `# Performance

Written by \`npm run bench\` (bench/run.ts); do not edit by hand — rerun it. Raw numbers, every
percentile and the query plans are in \`${options.resultsFile}\`.

- **Date:** ${options.date}; **commit:** ${options.commit}; the run took ${Math.round(options.durationS)} s.
- **Machine:** ${machine.nproc} cores (${machine.cpu}), ${machine.memoryGiB.toFixed(0)} GiB, Node ${machine.node},
  ${machine.postgres}; load average at start ${machine.loadAverageAtStart.map((value) => value.toFixed(2)).join(" / ")}.
  Shared and noisy: read the ratios, not the absolute figures, and treat differences under ~15%
  (throughput) or 2× (p99) as noise.

## Results

${renderMarkdownTable(options.rows)}

${options.notes.map((note) => `- ${note}`).join("\n")}

## Method

One runner measures the raw PostgreSQL floor and Handshake on the same machine, against the same
scratch database, **interleaved**: latencies alternate a block of raw samples and a block of
Handshake samples (${sizes.pushBlocks} blocks for G3.1, ${sizes.loopBlocks} for G3.2, ${sizes.scaleBlocks} for G3.4) and pool
the samples of all blocks; rates run ${sizes.rounds} round(s) of "raw, then Handshake" and report the
median round. Handshake is the
real production build (\`next build\` into \`.next-bench\`) served by \`server.ts\` (Next, socket.io
\`/console\`, the LISTEN bridge, the sweeper) on 127.0.0.1, with a Lead seeded through
\`HANDSHAKE_ADMIN_EMAIL\`/\`PASSWORD\`; clients run in the bench process and use only the public
HTTP API and socket.io, signed in through \`POST /api/v1/auth/login\` (consoles) or with bearer
tokens (agents, and a Lead API token for scripted decisions). The scratch database is dropped and
the server stopped at the end, also on failure.

**Raw floor** (the \`pg\` driver, nothing else; tables \`raw_*\` beside Handshake's):
- *INSERT…RETURNING rate*: autocommitted single-row inserts of a small JSON row, on 1 and on 8
  connections for ${sizes.insertRateMs / 1000} s each; "with NOTIFY" adds an \`AFTER INSERT\` trigger
  calling \`pg_notify\` (as Handshake's \`events\` table does) and one listening connection.
- *NOTIFY latency*: from sending an autocommitted \`SELECT pg_notify(…)\` to the listening client
  receiving it, one at a time (${sizes.notifySamples.toLocaleString("en-US")} samples).
- *Loop*: an "agent" connection inserts a pending row (trigger NOTIFY), a "lead" connection hears it
  and updates it to approved (trigger NOTIFY), the agent's listening connection hears the decision
  (${sizes.rawLoops.toLocaleString("en-US")} loops).

**Gate verdict** (${sizes.gateClients} keep-alive clients, ${sizes.gateMs / 1000} s per side, ${sizes.rounds} round(s)):
${sizes.gateClients} agents each call \`POST /api/v1/tool-calls\` with a read-only tool the gate allows
without a plan (recorded before it answers), against the floor of a plain \`node:http\` server
(bench/plain-server.ts, its own process) that authenticates nothing and does one INSERT through
\`pg\` per call. \`GET /api/v1/health\` is compared the same way with the plain server answering
without the database. Each round runs plain, Handshake, plain health, Handshake health; latencies
are pooled over rounds, rates are the median round. The server's CPU time over each Handshake
window gives CPU per call, the figure least disturbed by a busy machine; with the CPU of every
PostgreSQL process and of the bench's own process over the same window, and the floor's server
read the same way, it gives each side's CPU per call on the whole machine. It runs after G3.1,
with the Lead's one console connected (as G3.2 and G3.3 do): each verdict's \`tool.allowed\`
event is pushed to it.

**G3.1 push latency** (${sizes.pushRequests.toLocaleString("en-US")} requests, ${sizes.pushConsoles} consoles):
one agent submits a plan with \`POST /api/v1/requests\` (each one supersedes its previous pending
plan, so the one-pending-per-type rule never refuses it); the next is sent only after every console
received the \`request.created\` event. *Commit time* is not visible from outside, so the bench
holds its own raw \`LISTEN handshake_events\` connection (the "witness"): PostgreSQL signals every
listener of a commit at the same moment, so the witness receives the event's id at *commit + raw
NOTIFY latency*, the very path Handshake's bridge starts from. It listens only through G3.1's and
G3.4's blocks, the raw NOTIFY floor's among them: a listener costs PostgreSQL at every notifying
commit and the bench a parse of every event, which the other phases would pay for nothing. Each
console receipt is timed against the witness (\`console − witness\`, the latency Handshake adds:
the bridge's check of the signed payload or its read of the new events, hub, socket.io, client
parse) and reported as *commit → console* = that added latency + the raw NOTIFY p50 measured in
the same run. Both percentiles are over every (request, console) delivery. For
cross-checking, the JSON also has "console receipt − moment POST returned" (which can be negative:
the event may beat the HTTP response) and the POST round trip itself.

From G3.2 on, only the Lead's console stays connected (19 more sockets would measure the fan-out
again, which G3.1 and G3.4 do).

**G3.2 full loop** (${sizes.loops.toLocaleString("en-US")} loops): the agent submits a plan over HTTP and
then long-polls \`GET /api/v1/inbox?after=…&wait=30\` (what agents/worker-loop does); a scripted Lead
on a console socket approves with \`POST /api/v1/requests/{id}/responses\` as soon as
\`request.created\` arrives; the loop ends when the long-poll returns the decision. Timed from
before the POST to the long-poll's answer. Its two writes alone, in the same blocks: a plan of an
agent of their own submitted and approved through the domain functions (\`submitRequest\`, then
\`decideRequest\`) in the bench's process, back to back (not in a baseline run).

**Diagnosis rows** (${sizes.breakdownSamples} submissions each way, interleaved in ${sizes.breakdownBlocks} blocks): one plan
submission three ways — the same statements the product's transaction sends (lock and read the
agent, find, supersede, inserts, updates, one multi-row insert of the four events, in order) as raw
SQL through \`pg\`; the domain function
(\`submitRequest\`) called in-process through Prisma; and \`POST /api/v1/requests\` over HTTP. The
differences are Prisma's share and the HTTP/Next/auth share of a mutation.

**G3.3 throughput** (${sizes.throughputConcurrency} concurrent clients, ${sizes.throughputMs / 1000} s per
round): ${sizes.agents} agents registered through \`POST /api/v1/agents\`, split into
${sizes.throughputConcurrency} disjoint slices; each client submits plans round-robin over its
slice, so no two clients contend for one agent's row lock, the first submission to an agent in a
round creates its pending plan and later ones supersede it (the common case for a busy agent).
Then ${sizes.throughputConcurrency} Lead clients approve every plan left pending (one per agent):
decisions per second. Both against raw INSERT+NOTIFY on 8 connections, measured just before. The
server's CPU time (\`/proc/<pid>/stat\`) over each window gives CPU per submission and decision.
Each round then makes the same writes *without HTTP* (bench/writes-alone.ts, diagnosis rows):
${sizes.throughputConcurrency} callers in the bench's process call the domain functions the routes call
(\`submitRequest\`, \`decideRequest\`) through a pool of their own, on the same agents, for as long;
each takes its one-statement path, so what is left is that statement in PostgreSQL, its commit and
its NOTIFY, and the driver, while the server publishes their events to the Lead's console as in
G3.3: what these writes reach on this machine however cheap the API became.

**A team at one call a second** (a report, no goal): the issue's own scene, the ${sizes.agents} agents
of G3.3 each making one gate call a second (the read-only call of the gate rows) for
${sizes.teamSeconds} s, their turns spread evenly over each second, each agent on a keep-alive
connection of its own (the node holds the whole team's sockets). Open loop: a call is sent at its
turn whether or not the agent's last one has answered, and timed from its turn, so a node that
falls behind shows its queue in the latencies instead of slowing the load down. The same load
against the plain floor server is the floor; ${sizes.rounds} round(s) of "plain, then Handshake",
latencies pooled over rounds, each round on new connections. It runs after G3.3, so the agents'
tokens are known to the node and their first tool calls are not.

**G3.4 scale**: ${sizes.agents} agents each keep one \`GET /inbox?wait=30\` open (re-issued when it
returns) and ${sizes.scaleConsoles} consoles are connected; G3.1 is measured again against all
${sizes.scaleConsoles} consoles (${sizes.scalePushRequests.toLocaleString("en-US")} requests), interleaved with raw
NOTIFY latency under the same load (that is the floor for these rows). Server RSS is read from
\`/proc/<pid>/status\` (VmRSS). *RSS per open long-poll* is measured at the end of the phase: once the push
load is over, the long-polls are closed and opened again (5 s to settle), so nothing else allocates
between the two readings (decision 048); with every console attached, twice the same way: a full garbage collection in the
server (\`HeapProfiler.collectGarbage\` through its \`--inspect\` port on loopback,
bench/inspector.ts), then RSS read every ${RSS_INTERVAL_MS} ms until it settles (the medians of
the last two windows of ${RSS_WINDOW} readings within ${RSS_TOLERANCE_MIB} MiB, at most
${RSS_MAX_WAIT_MS / 1000} s) — once with the ${sizes.agents} long-polls open again, once 2 s after
they are closed; (median of the last window with them − the idle one) / ${sizes.agents}. After the
push, because a forced collection ahead of it made the push under the long-polls fail (503, four
runs out of four). Without the collection, the garbage of the phases before decides
the figure (the long-polls' own allocations trigger the collection that frees it, so it came out
negative); the baseline is measured by the same code. RSS also moves with how much freed memory
the process hands back to the system, which varies from run to run, so the *V8 heap in use* row
reads V8's own count (\`Runtime.getHeapUsage\`) right after each of the two collections: what the
long-polls hold in the heap, whatever became of the pages. Its floor is measured by the same code
on a plain \`node:http\` server (bench/plain-server.ts, its own process) that holds each long-poll
with nothing but the request and a timer: what an open request costs Node at all. The
peak row (RSS read once a second through
the whole load, peak − the collected idle, / ${sizes.agents}) is a diagnosis:
it is mostly the push load's garbage. The *idle cost* rows compare server CPU time and the
database's committed transactions (\`pg_stat_database\`) over a quiet window before the load and
one with every long-poll and console attached but nothing happening. Event-loop lag is measured from outside, with no
product change: \`GET /api/v1/health\` (one \`SELECT 1\`) every 20 ms from a process of its own
(bench/health-probe.ts; in the bench's process it waited behind the 1,000 long-poll clients and 50
consoles the bench drives), for 15 s idle (raw floor column) and through the push under load; the
machine's CPU over both windows (server, PostgreSQL, the bench) is in the notes. Agents' liveness: the bench moves their last heartbeat a day ahead with one SQL
statement, so the sweeper does not mark idle agents offline mid-run; heartbeat traffic (a real
worker sends one every 5 s) is therefore *not* part of this load.

**G3.5 history** (${sizes.historyRows.toLocaleString("en-US")} decided requests inserted with one
\`INSERT … SELECT generate_series\`, spread over the agents and 30 days, then \`ANALYZE\`): the first
page \`GET /api/v1/requests?status=approved&limit=50\` and a filtered page
(\`&agent=<name>&type=plan_approval\`), ${sizes.historySamples} round trips each on loopback with a Lead
token; the raw floor runs the exact SQL Prisma sends (captured from Prisma's query log by calling the
same \`listRequests\`) through \`pg\`. \`EXPLAIN (ANALYZE, BUFFERS)\` of that SQL names the indexes
used (full plans in the JSON).

**Team board (issue 16)**: the production \`/team?view=table\` page in Chromium (the e2e's
Debian Chromium, driven by Playwright, signed in with the bench Lead's cookie), first with
${sizes.boardSmallAgents} agents on the board, then the same page after registering agents up to
${sizes.boardAgents.toLocaleString("en-US")}; ${sizes.boardSamples} samples per size, medians. *Time to first rows*: from
\`page.goto\` to the first table row visible (server render of the whole roster included).
*Main-thread busy*: the page is open and live, then ${sizes.boardEvents} \`agent.updated\` events
(alternating working/idle, so each changes what its row shows) are inserted into the event log in
ten batches over about a second; they reach the page through the real bridge and socket; busy
time is the change of CDP \`Performance.getMetrics\` \`TaskDuration\` over the burst plus 2 s. The
"raw floor" column of these rows holds the small board, the ratio is large ÷ small.

**G3.6 what the Lead feels** (${sizes.leadIterations} requests after ${sizes.leadWarmup} not counted): the
production inbox in Debian's Chromium (Playwright, the bench Lead's cookie), one fresh agent per
request. One clock, the bench's: the page calls a binding (\`page.exposeFunction\`) in the animation
frame after a \`MutationObserver\` sees the row, and Node timestamps the call as CDP delivers it.
*Committed → row visible*: from the agent's \`POST /api/v1/requests\` returning to that call.
*Approve → long-poll*: the agent parks \`GET /api/v1/requests/{id}?wait=30\`, the bench sends an
in-page \`click()\` to the card's Approve button; until the long-poll answers. Target: G3.1's push
p50 of the same run + 33 ms (two frames); without Chromium the rows say "skipped" and why.

**Before (baseline)**: the same bench, same sizes, first runs the phases issue 18 compares (gate,
push, loop, breakdown, throughput, scale) against the baseline commit (\`BENCH_BASELINE\`, default
46ffd1d, where that work started; \`off\` skips it), unpacked with \`git archive\` into a temporary
folder and served by its own server.ts on its own scratch database; the column shows its figure and
its ratio to its own floors. With \`BENCH_CPU_PROF\`, its profile goes to \`<dir>/baseline\`.

No benchmark is a test: nothing here can fail CI on timing. \`BENCH_QUICK=1\` runs small counts
(and leaves this file alone), \`BENCH_ONLY=gate,push,loop,breakdown,throughput,team,scale,history,board,hook,lead\` a subset (\`BENCH_ONLY=board\` runs the board alone),
\`BENCH_CPU_PROF=<dir>\` profiles the server (and the baseline's, into \`<dir>/baseline\`) in one
more pass of each hot path's load after its measured rounds, so that no goal is read under the
profiler (decision 063), leaves each of those profiles in \`<dir>\` and writes the hot paths' shares
into "Profiling" below; \`node --import tsx bench/profile-summary.ts <file.cpuprofile>\` summarises
a whole profile by package and function.

## Profiling

${renderProfiles(options.profiles)}

What profiling found and what it changed, change by change, are dated records, not results of
this run: decision 007 (docs/decisions/007-fewer-statements-per-mutation.md, "Measurements") and
the sections below.

${HAND_WRITTEN_MARKER}
${await readHandWritten(options.path)}`;
  await writeFile(options.path, text);
}

/** The server's CPU profiles of one run: this commit's, and the baseline's when it ran too. */
export type ProfilesOfRun = {
  after: HotPathProfiles;
  before?: { commit: string; profiles: HotPathProfiles } | undefined;
};

const PROFILE_ROWS = 10;

function shareCell(share: Share | undefined): string {
  return share ? `${share.percent.toFixed(1)}% \`${share.name}\`` : "";
}

function renderHotPath(hotPath: HotPath, profiles: ProfilesOfRun): string {
  const after = profiles.after[hotPath];
  if (!after) return "";
  const before = profiles.before?.profiles[hotPath];
  const beforeCommit = profiles.before?.commit;
  const packages = (shares: readonly Share[]) =>
    shares
      .slice(0, 6)
      .map((share) => `${share.name} ${share.percent.toFixed(1)}%`)
      .join(", ");
  const lines = [
    `**${HOT_PATHS[hotPath]}**: ${after.sampledMs.toLocaleString("en-US")} ms of samples` +
      (before ? ` (before: ${before.sampledMs.toLocaleString("en-US")} ms).` : "."),
    "",
    ...(before ? [`- Self time by package, before: ${packages(before.selfByPackage)}.`] : []),
    `- Self time by package${before ? ", after" : ""}: ${packages(after.selfByPackage)}.`,
    "",
  ];
  const headers = before
    ? ["#", `Self time, before (${beforeCommit})`, "Self time, after"]
    : ["#", "Self time"];
  lines.push(`| ${headers.join(" | ")} |`, `|${headers.map(() => "---").join("|")}|`);
  for (let rank = 0; rank < PROFILE_ROWS; rank++) {
    const cellsOfRank = [
      String(rank + 1),
      ...(before ? [shareCell(before.selfByFunction[rank])] : []),
      shareCell(after.selfByFunction[rank]),
    ];
    if (cellsOfRank.slice(1).every((cell) => cell === "")) break;
    lines.push(`| ${cellsOfRank.map((cell) => cell.replaceAll("|", "\\|")).join(" | ")} |`);
  }
  return lines.join("\n");
}

/**
 * The server's CPU profile cut to each hot path's windows (bench/profile.ts): shares of the
 * samples taken while that path was under load, idle included, so a busier server shows less idle.
 */
export function renderProfiles(profiles: ProfilesOfRun | undefined): string {
  if (!profiles) {
    return "This run took no CPU profiles (`BENCH_CPU_PROF=<dir>` takes them, of this commit and the baseline).";
  }
  const sections = (Object.keys(HOT_PATHS) as HotPath[])
    .map((hotPath) => renderHotPath(hotPath, profiles))
    .filter((section) => section !== "");
  return [
    "CPU profiles of the hot paths, from this run: V8's profiler ran in the server, started and",
    "stopped through its inspector, during one more pass of each hot path's load after its measured",
    "ones, and each path's share is cut out of those profiles by the windows of that pass (V8 stamps",
    "samples with the monotonic clock the bench reads). No goal's figure was read under it. Shares",
    "are of every sample in those windows, idle included.",
    "",
    ...sections.flatMap((section) => [section, ""]),
  ]
    .join("\n")
    .trimEnd();
}

/** Everything below this line in docs/PERFORMANCE.md is written by hand and kept by every run. */
const HAND_WRITTEN_MARKER = "<!-- Below: written by hand; npm run bench keeps it. -->";

async function readHandWritten(path: string): Promise<string> {
  const existing = await readFile(path, "utf8").catch(() => "");
  const start = existing.indexOf(HAND_WRITTEN_MARKER);
  return start < 0 ? "" : existing.slice(start + HAND_WRITTEN_MARKER.length).replace(/^\n/, "");
}
