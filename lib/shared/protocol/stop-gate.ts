import { MUTATING_TOOLS } from "./gate";

export type StopVerdict = { allowed: false; code: "AGENT_STOPPING"; reason: string };

/**
 * Stopping is one-way: an agent that agreed to stop may read and report, but changes nothing
 * more. Checked before the plan gate, by the server and by the worker's own dispatcher alike.
 */
export function refuseWhileStopping(isStopping: boolean, tool: string): StopVerdict | null {
  if (!isStopping || !MUTATING_TOOLS.has(tool)) return null;
  return {
    allowed: false,
    code: "AGENT_STOPPING",
    reason: `${tool} is refused: this agent agreed to stop; persist your state and exit`,
  };
}
