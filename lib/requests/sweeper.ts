import { forceOverdueStops, markSilentAgentsOffline } from "../agents/mutations";
import type { PrismaClient } from "../generated/prisma/client";
import { expireDueRequests } from "./mutations";

/**
 * Runs on every web node. Expiry is a compare-and-set under the agent's row lock, so nodes sweeping
 * at the same moment still expire each request exactly once.
 */
export function startSweeper(
  db: PrismaClient,
  options: { intervalMs?: number } = {},
): { stop: () => void } {
  let isRunning = false;
  const sweep = async () => {
    if (isRunning) return;
    isRunning = true;
    try {
      await expireDueRequests(db);
      await markSilentAgentsOffline(db);
      await forceOverdueStops(db);
    } catch (error) {
      console.error("[sweeper] sweep failed; retrying next tick", error);
    } finally {
      isRunning = false;
    }
  };
  const timer = setInterval(() => void sweep(), options.intervalMs ?? 1_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
