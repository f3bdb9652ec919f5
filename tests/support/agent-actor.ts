import { randomBytes } from "node:crypto";
import type { AgentActor } from "../../lib/auth/actor";
import { registerAgent } from "../../lib/agents/mutations";
import type { PrismaClient } from "../../lib/generated/prisma/client";

/** A newly registered agent as the actor its token resolves to, for calling domain code directly. */
export async function registerAgentActor(
  db: PrismaClient,
  namePrefix: string,
  options: { requirePlan?: boolean } = {},
): Promise<AgentActor> {
  const name = `${namePrefix}-${randomBytes(4).toString("hex")}`;
  const { agent: view } = await registerAgent(db, { name, role: "tester", ...options });
  const row = await db.agent.findUniqueOrThrow({ where: { name } });
  return { kind: "agent", agentId: row.id, name: view.name, incarnation: view.incarnation };
}
