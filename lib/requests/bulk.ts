import type { PrismaClient } from "../generated/prisma/client";
import type { HumanActor } from "../auth/actor";
import { findAgentByName } from "../agents/data";
import { refusalOfUndoneChange } from "../db";
import { AppError, isAppError } from "../errors";
import { findProtocolType } from "../protocol/registry";
import type { BulkDecision, BulkDecisionResult } from "../shared/api/bulk-decision";
import { decideRequest } from "./mutations";
import type { BulkRespondInput } from "./schema";

/** As many as one screen of the inbox shows; more is a script, and it can page. */
export const MAX_BULK_DECISIONS = 100;

function refuseBatch(ids: readonly string[]): void {
  if (ids.length === 0 || ids.length > MAX_BULK_DECISIONS) {
    throw new AppError(
      "INVALID_BATCH",
      `a bulk decision takes 1–${MAX_BULK_DECISIONS} request ids, not ${ids.length}`,
    );
  }
  const repeated = ids.find((id, index) => ids.indexOf(id) !== index);
  if (repeated !== undefined) {
    throw new AppError("INVALID_BATCH", `request ${repeated} is named twice`, {
      details: { id: repeated },
    });
  }
}

/** The agent's requests waiting on the Lead now, oldest first, at most one batch of them. */
async function pendingIdsOfAgent(db: PrismaClient, name: string): Promise<string[]> {
  const agent = await findAgentByName(db, name);
  const rows = await db.request.findMany({
    where: { agentId: agent.id, status: "pending", target: "lead" },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: MAX_BULK_DECISIONS,
    select: { id: true },
  });
  return rows.map((row) => row.id);
}

async function decideOne(
  db: PrismaClient,
  responder: HumanActor,
  id: string,
  decision: { approve: boolean; feedback: string | undefined },
): Promise<BulkDecisionResult> {
  try {
    const found = await db.request.findUnique({ where: { id }, select: { type: true } });
    if (!found) throw new AppError("REQUEST_NOT_FOUND", `no request ${id}`);
    const definition = findProtocolType(found.type);
    if (!definition) throw new AppError("UNKNOWN_TYPE", `unknown request type '${found.type}'`);
    if (definition.bulkRefusal) throw new AppError("NOT_BULK_DECIDABLE", definition.bulkRefusal);
    const request = await decideRequest(db, responder, id, {
      type: definition.responseType,
      approve: decision.approve,
      ...(decision.feedback ? { feedback: decision.feedback } : {}),
    });
    return { id, ok: true, request };
  } catch (error) {
    // One request decided elsewhere, expired or fenced off is the normal case of a batch: it is
    // reported beside the others, and so is one PostgreSQL rolled back against a concurrent
    // transaction or whose statement it canceled, as the decisions before it stand. Anything else
    // (the database gone) ends the batch as it would end a single decision.
    const refusal = refusalOfUndoneChange(error) ?? error;
    if (!isAppError(refusal)) throw error;
    return { id, ok: false, error: { code: refusal.code, message: refusal.message } };
  }
}

/**
 * One approve-or-reject for many requests. Each goes through `decideRequest` in its own
 * transaction, so each gets the checks, decision, event and provenance a single decision gets, and
 * one that cannot be decided leaves the rest decided.
 */
export async function decideRequestsInBulk(
  db: PrismaClient,
  responder: HumanActor,
  input: BulkRespondInput,
): Promise<BulkDecision> {
  const feedback = input.feedback?.trim() || undefined;
  if (!input.approve && !feedback) {
    throw new AppError(
      "FEEDBACK_REQUIRED",
      "say why when you reject, so the other side can act on it",
    );
  }
  const ids = "ids" in input ? input.ids : await pendingIdsOfAgent(db, input.agent);
  if ("ids" in input) refuseBatch(ids);
  const results: BulkDecisionResult[] = [];
  // In order, not in parallel: requests of one agent share its row lock, and the caller reads
  // the results in the order it asked.
  for (const id of ids) {
    results.push(await decideOne(db, responder, id, { approve: input.approve, feedback }));
  }
  return { results };
}
