import { ApiError } from "./http-transport";
import type { LeadClient } from "./lead-client";

/** Three scripted teammates that exercise every part of the console within seconds of `npm start`. */
export const DEMO_TEAM = [
  {
    name: "ada",
    role: "documentation writer",
    prompt: "Summarise the project notes into notes/summary.md.",
    requirePlan: true,
    worker: { model: "scripted", script: "careful-planner" },
  },
  {
    name: "brock",
    role: "refactoring engineer",
    prompt: "Refactor the build. Be bold.",
    requirePlan: true,
    worker: { model: "scripted", script: "bold-refactorer" },
  },
  {
    name: "cyd",
    role: "read-only auditor",
    prompt: "Audit the workspace and report findings to the Lead.",
    requirePlan: false,
    worker: { model: "scripted", script: "read-only-auditor" },
  },
] as const;

/** Registers the demo agents that do not exist yet; existing ones are the supervisor's to recover. */
export async function registerDemoTeam(client: LeadClient): Promise<string[]> {
  const existing = new Set((await client.listAgents()).map((agent) => agent.name));
  const registered: string[] = [];
  for (const member of DEMO_TEAM) {
    if (existing.has(member.name)) continue;
    try {
      await client.registerAgent({ ...member, worker: { ...member.worker } });
      registered.push(member.name);
    } catch (error) {
      if (!(error instanceof ApiError && error.code === "AGENT_EXISTS")) throw error;
    }
  }
  return registered;
}
