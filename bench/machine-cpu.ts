import { readdir, readFile } from "node:fs/promises";
import os from "node:os";

/** USER_HZ: 100 on every Linux this runs on (`getconf CLK_TCK`); /proc counts CPU time in it. */
const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of one process, in seconds, from its /proc stat line. */
export function cpuSecondsOfStat(stat: string): number {
  // Fields after the command name: state is 1st, utime 12th, stime 13th (in clock ticks).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** utime + stime of one process by pid, in seconds. */
export async function readProcessCpuSeconds(pid: number | undefined): Promise<number> {
  return cpuSecondsOfStat(await readFile(`/proc/${pid}/stat`, "utf8"));
}

/**
 * CPU seconds of every PostgreSQL process on this machine, by pid: the bench's database runs on
 * the machine's own server, whose backends (one per connection) are where a statement's database
 * work is spent. A backend that exits between two readings takes its time with it, so the pool
 * connections a reading window relies on must stay open through it.
 */
export async function readPostgresCpuSeconds(): Promise<Map<number, number>> {
  const seconds = new Map<number, number>();
  for (const entry of await readdir("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8");
      if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) !== "postgres") continue;
      seconds.set(pid, cpuSecondsOfStat(stat));
    } catch {
      // The process ended while the directory was read.
    }
  }
  return seconds;
}

/** PostgreSQL's CPU seconds between two readings: processes in both, and those born between. */
export function postgresCpuBetween(
  before: Map<number, number>,
  after: Map<number, number>,
): number {
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}

/** This process's own CPU seconds (the bench's HTTP clients run in it). */
export function benchCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/**
 * One call's CPU on the whole machine, and the rate that much CPU allows on all of its cores: a
 * throughput goal above that ceiling is out of reach here whatever the server does.
 */
export function describeCpuSplit(serverMs: number, postgresMs: number, benchMs: number): string {
  const totalMs = serverMs + postgresMs + benchMs;
  const ceiling = (os.availableParallelism() * 1000) / totalMs;
  return `server ${serverMs.toFixed(1)} + PostgreSQL ${postgresMs.toFixed(1)} + the bench's clients ${benchMs.toFixed(1)} = ${totalMs.toFixed(1)} ms, a ceiling of ${ceiling.toFixed(0)}/s`;
}

/** Where the machine's CPU stood at one moment: the server's, every PostgreSQL process's, the bench's. */
export type MachineCpuReading = {
  atMs: number;
  serverSeconds: number;
  postgresSeconds: Map<number, number>;
  benchSeconds: number;
};

export async function readMachineCpu(
  readServerCpuSeconds: () => Promise<number>,
  nowMs: () => number,
): Promise<MachineCpuReading> {
  return {
    atMs: nowMs(),
    serverSeconds: await readServerCpuSeconds(),
    postgresSeconds: await readPostgresCpuSeconds(),
    benchSeconds: benchCpuSeconds(),
  };
}

/**
 * How busy the machine was between two readings, each part as a percentage of one core, against
 * what all cores allow: near the top, every process waits its turn, the server included, and a
 * latency measured then is the machine's as much as the server's.
 */
export function describeMachineBusy(before: MachineCpuReading, after: MachineCpuReading): string {
  const seconds = (after.atMs - before.atMs) / 1000;
  const percent = (cpuSeconds: number) => (cpuSeconds / seconds) * 100;
  const server = percent(after.serverSeconds - before.serverSeconds);
  const postgres = percent(postgresCpuBetween(before.postgresSeconds, after.postgresSeconds));
  const bench = percent(after.benchSeconds - before.benchSeconds);
  const cores = os.availableParallelism();
  return `server ${server.toFixed(0)}% + PostgreSQL ${postgres.toFixed(0)}% + the bench ${bench.toFixed(0)}% = ${(server + postgres + bench).toFixed(0)}% of ${cores * 100}% (${cores} cores)`;
}

/** The CPU one call cost each part between two readings, in milliseconds. */
export function cpuMsPerCall(
  before: MachineCpuReading,
  after: MachineCpuReading,
  calls: number,
): { serverMs: number; postgresMs: number; benchMs: number } {
  const perCall = (seconds: number) => (seconds * 1000) / calls;
  return {
    serverMs: perCall(after.serverSeconds - before.serverSeconds),
    postgresMs: perCall(postgresCpuBetween(before.postgresSeconds, after.postgresSeconds)),
    benchMs: perCall(after.benchSeconds - before.benchSeconds),
  };
}
