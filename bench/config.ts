import { z } from "zod";
import { env } from "../lib/env";
import { adminDatabaseUrl } from "../tests/admin-database-url";

// The bench's knobs live in lib/env.ts with every other variable; all are optional.
const PHASES = [
  "gate",
  "push",
  "loop",
  "breakdown",
  "throughput",
  "team",
  "scale",
  "history",
  "board",
  "hook",
  "lead",
] as const;
export type Phase = (typeof PHASES)[number];

const selectedPhases = env.BENCH_ONLY
  ? z
      .array(z.enum(PHASES))
      .min(1)
      .parse(env.BENCH_ONLY.split(",").map((phase) => phase.trim()))
  : undefined;

export const benchEnv = {
  BENCH_QUICK: env.BENCH_QUICK,
  BENCH_ONLY: selectedPhases,
  BENCH_PORT: env.BENCH_PORT,
  BENCH_REBUILD: env.BENCH_REBUILD,
  BENCH_CPU_PROF: env.BENCH_CPU_PROF,
  BENCH_BASELINE: env.BENCH_BASELINE,
  BENCH_SERVER_DIR: env.BENCH_SERVER_DIR,
  BENCH_BASELINE_OUT: env.BENCH_BASELINE_OUT,
  // The admin connection that creates and drops the bench's scratch database.
  BENCH_ADMIN_DATABASE_URL: adminDatabaseUrl(),
};

export function isPhaseSelected(phase: Phase): boolean {
  return !benchEnv.BENCH_ONLY || benchEnv.BENCH_ONLY.includes(phase);
}

/**
 * Sizes from issue 7; quick mode scales them down to check the bench itself. Latency measurements
 * alternate raw and Handshake in `blocks` (raw block, Handshake block, raw block, …) so a noisy
 * neighbour hits both alike; rates run `rounds` times, raw first.
 */
export const sizes = benchEnv.BENCH_QUICK
  ? {
      rounds: 1,
      gateClients: 8,
      gateMs: 1_500,
      pushConsoles: 20,
      pushRequests: 150,
      notifySamples: 300,
      pushBlocks: 3,
      loops: 60,
      rawLoops: 150,
      loopBlocks: 3,
      breakdownSamples: 60,
      breakdownBlocks: 2,
      insertRateMs: 1_000,
      throughputMs: 2_000,
      throughputConcurrency: 8,
      teamSeconds: 3,
      agents: 200,
      scaleConsoles: 50,
      scalePushRequests: 150,
      scaleNotifySamples: 300,
      scaleBlocks: 3,
      historyRows: 20_000,
      historySamples: 60,
      historyBlocks: 2,
      boardAgents: 1_000,
      boardSmallAgents: 10,
      boardEvents: 500,
      boardSamples: 2,
      hookSamples: 20,
      leadIterations: 10,
      leadWarmup: 2,
    }
  : {
      rounds: 3,
      gateClients: 8,
      gateMs: 4_000,
      pushConsoles: 20,
      pushRequests: 1_200,
      notifySamples: 1_500,
      pushBlocks: 12,
      loops: 600,
      rawLoops: 900,
      loopBlocks: 12,
      breakdownSamples: 300,
      breakdownBlocks: 6,
      insertRateMs: 2_000,
      throughputMs: 5_000,
      throughputConcurrency: 8,
      teamSeconds: 8,
      agents: 1_000,
      scaleConsoles: 50,
      scalePushRequests: 1_050,
      scaleNotifySamples: 1_050,
      scaleBlocks: 7,
      historyRows: 100_000,
      historySamples: 200,
      historyBlocks: 4,
      boardAgents: 1_000,
      boardSmallAgents: 10,
      boardEvents: 500,
      boardSamples: 5,
      hookSamples: 100,
      leadIterations: 60,
      leadWarmup: 3,
    };
export type Sizes = typeof sizes;
