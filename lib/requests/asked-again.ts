import type { Db } from "../db";
import type { AskedAgainAfter } from "../shared/api/request";

/** How many of an agent's latest rejected plans a new plan is compared with. */
const RECENT_REJECTED_PLANS = 20;

/** A plan's text as a person reads it: case, spacing and Unicode forms do not make a new plan. */
export function normalizePlan(plan: string): string {
  return plan.normalize("NFKC").replace(/\s+/g, " ").trim().toLowerCase();
}

/**
 * The latest request of the same agent the Lead rejected that this one repeats: a tool call with
 * the same call hash (the server's own, over tool, arguments and directory), or a plan with the
 * same normalised text. Found once, at creation, and stored with the request, so the inbox shows
 * "asked again after rejection" with the earlier feedback without a query per card.
 */
export async function findEarlierRejection(
  db: Db,
  agentId: string,
  type: string,
  payload: Record<string, unknown>,
): Promise<AskedAgainAfter | null> {
  const rejected = { agentId, type, status: "rejected" as const };
  if (type === "tool_approval" && typeof payload.callHash === "string") {
    const earlier = await db.request.findFirst({
      where: { ...rejected, payload: { path: ["callHash"], equals: payload.callHash } },
      orderBy: { createdAt: "desc" },
      select: { id: true, feedback: true },
    });
    return earlier ? { requestId: earlier.id, feedback: earlier.feedback } : null;
  }
  if (type === "plan_approval" && typeof payload.plan === "string") {
    const plan = normalizePlan(payload.plan);
    const recent = await db.request.findMany({
      where: rejected,
      orderBy: { createdAt: "desc" },
      take: RECENT_REJECTED_PLANS,
      select: { id: true, feedback: true, payload: true },
    });
    const earlier = recent.find(
      (row) => normalizePlan(String((row.payload as { plan?: unknown }).plan ?? "")) === plan,
    );
    return earlier ? { requestId: earlier.id, feedback: earlier.feedback } : null;
  }
  return null;
}
