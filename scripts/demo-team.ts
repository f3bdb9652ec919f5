import { registerAgent } from "../lib/agents/mutations";
import { createDb } from "../lib/db";
import { isAppError } from "../lib/errors";

/** Four scripted teammates that exercise every part of the console within seconds of `npm start`. */
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
  {
    name: "dot",
    role: "release engineer",
    prompt: "Write the release notes; ask the Lead what you cannot know yourself.",
    requirePlan: false,
    worker: { model: "scripted", script: "release-asker" },
  },
] as const;

/**
 * Registers the demo agents that do not exist yet; existing ones are the supervisor's to recover.
 * Written straight to the database by `npm start` (the supervisor's token may not register
 * agents); the supervisor starts them from the `agent.registered` events.
 */
export async function registerDemoTeam(databaseUrl: string): Promise<string[]> {
  const db = createDb(databaseUrl);
  try {
    const existing = new Set(
      (await db.agent.findMany({ select: { name: true } })).map((agent) => agent.name),
    );
    const registered: string[] = [];
    for (const member of DEMO_TEAM) {
      if (existing.has(member.name)) continue;
      try {
        await registerAgent(db, { ...member, worker: { ...member.worker } });
        registered.push(member.name);
      } catch (error) {
        if (!(isAppError(error) && error.code === "AGENT_EXISTS")) throw error;
      }
    }
    return registered;
  } finally {
    await db.$disconnect();
  }
}
