import type { PrismaClient } from "../generated/prisma/client";
import type { HumanActor } from "../auth/actor";
import { lockAgent } from "../agents/data";
import { AppError } from "../errors";
import { appendEvent } from "../events/mutations";
import { inTransaction } from "../transaction";
import type { ExtendDeadlineInput } from "./schema";
import { toRequestView, type RequestView } from "./views";
import { databaseNowMs } from "../database-clock";

/**
 * However often it is extended, a request is decided or expires within a day of being asked (the
 * longest timeout a sender may ask for): an agent never waits on a card forgotten for days.
 */
export const MAX_REQUEST_LIFETIME_SECONDS = 86_400;

/** Raised by the database itself when a decision reaches a request past its deadline (migration 006). */
export const LATE_DECISION_SQLSTATE = "P0002";

/**
 * Gives a request waiting on the Lead more time. Under the agent's row lock, like every expiry, so
 * an extension and the sweeper never both win: a sweep that read the old deadline re-reads it under
 * the lock and finds the request not yet due. A request already past its deadline is not revived.
 */
export async function extendRequestDeadline(
  db: PrismaClient,
  actor: HumanActor,
  requestId: string,
  input: ExtendDeadlineInput,
): Promise<RequestView> {
  return inTransaction(db, async (tx) => {
    const found = await tx.request.findUnique({ where: { id: requestId } });
    if (!found) throw new AppError("REQUEST_NOT_FOUND", `no request ${requestId}`);
    if (found.target !== "lead") {
      throw new AppError("NOT_TARGET", `request ${requestId} waits on '${found.target}'`);
    }
    const agent = await lockAgent(tx, found.agentId);
    const request = await tx.request.findUniqueOrThrow({ where: { id: requestId } });
    if (request.status !== "pending") {
      throw new AppError("ALREADY_DECIDED", `request ${requestId} is already ${request.status}`, {
        details: { request: toRequestView(request) },
      });
    }
    if (request.expiresAt.getTime() <= databaseNowMs()) {
      throw new AppError("REQUEST_EXPIRED", `request ${requestId} has passed its deadline`);
    }
    const expiresAt = new Date(request.expiresAt.getTime() + input.extendSeconds * 1000);
    const latest = new Date(request.createdAt.getTime() + MAX_REQUEST_LIFETIME_SECONDS * 1000);
    if (expiresAt > latest) {
      throw new AppError(
        "DEADLINE_TOO_FAR",
        `a request stays open at most ${MAX_REQUEST_LIFETIME_SECONDS / 3600} h after it was asked; this one can be extended until ${latest.toISOString()}`,
        { details: { latestExpiresAt: latest.toISOString() } },
      );
    }
    const [updated] = await tx.request.updateManyAndReturn({
      where: { id: requestId, status: "pending" },
      data: { expiresAt },
    });
    if (!updated) throw new AppError("ALREADY_DECIDED", `request ${requestId} was just decided`);
    await appendEvent(tx, "request.deadline_extended", `request:${requestId}`, {
      requestId,
      type: updated.type,
      agent: agent.name,
      expiresAt: expiresAt.toISOString(),
      extendedBy: actor.email,
    });
    return toRequestView(updated);
  });
}
