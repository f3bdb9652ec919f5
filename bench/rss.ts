import { readFile } from "node:fs/promises";
import type { InspectedProcess } from "./inspector";
import { median, sleep } from "./stats";

/** VmRSS of a process in MiB. */
export async function readProcessRssMiB(pid: number | undefined): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

/**
 * A server's resident memory read repeatedly over a quiet window: RSS moves by a few MiB as the
 * garbage collector runs, so one reading can land on either side of a collection. The median of
 * the window is what the process settles at; a lone spike or dip does not move it.
 */
export function settledMiB(readings: readonly number[]): number {
  const valid = readings.filter((reading) => Number.isFinite(reading));
  if (valid.length === 0) throw new Error("no RSS reading to settle");
  return median(valid);
}

/**
 * Issue 18's measure: what each open long-poll costs, RSS with them open and settled minus idle
 * RSS settled the same way, over how many are open.
 */
export function rssPerLongPollKiB(options: {
  idleMiB: readonly number[];
  withLongPollsMiB: readonly number[];
  longPolls: number;
}): number {
  return perLongPollKiB(
    settledMiB(options.withLongPollsMiB) - settledMiB(options.idleMiB),
    options.longPolls,
  );
}

/** What the long-polls added, in MiB, per long-poll, in KiB. */
export function perLongPollKiB(grownMiB: number, longPolls: number): number {
  if (longPolls <= 0) throw new Error("no long-poll open");
  return (grownMiB * 1024) / longPolls;
}

/** One window of readings (2 s), how stable two windows must be, and how long to wait at most. */
export const RSS_WINDOW = 8;
export const RSS_INTERVAL_MS = 250;
export const RSS_TOLERANCE_MIB = 1;
export const RSS_MAX_WAIT_MS = 40_000;

/**
 * Whether RSS has stopped moving: the medians of the last two windows differ by at most the
 * tolerance. After a busy phase V8 gives heap back over several seconds; a reading taken while it
 * does would count the shrinking as the long-polls' (negative) cost.
 */
export function isSettled(readings: readonly number[], window = RSS_WINDOW): boolean {
  if (readings.length < 2 * window) return false;
  const last = settledMiB(readings.slice(-window));
  const previous = settledMiB(readings.slice(-2 * window, -window));
  return Math.abs(last - previous) <= RSS_TOLERANCE_MIB;
}

/**
 * Reads RSS every `intervalMs` until it settles (or `maxWaitMs` passes) and returns the last
 * window, the readings `settledMiB` takes the median of.
 */
export async function sampleSettledRssMiB(
  read: () => Promise<number>,
  options: { window?: number; intervalMs?: number; maxWaitMs?: number } = {},
): Promise<number[]> {
  const window = options.window ?? RSS_WINDOW;
  const intervalMs = options.intervalMs ?? RSS_INTERVAL_MS;
  const deadline = Date.now() + (options.maxWaitMs ?? RSS_MAX_WAIT_MS);
  const readings: number[] = [];
  for (;;) {
    readings.push(await read());
    if (isSettled(readings, window) || Date.now() >= deadline) return readings.slice(-window);
    await sleep(intervalMs);
  }
}

/**
 * A server's memory once a full collection has run: V8's heap in use, and RSS read until it
 * settles (sampleSettledRssMiB). Taken with the long-polls open and again once they are closed.
 */
export async function readCollectedMemory(
  server: InspectedProcess & { readRssMiB(): Promise<number> },
): Promise<{ heapMiB: number; rssReadings: number[] }> {
  await server.collectGarbage();
  const heapMiB = await server.readHeapUsedMiB();
  return { heapMiB, rssReadings: await sampleSettledRssMiB(() => server.readRssMiB()) };
}
