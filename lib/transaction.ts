import type { Prisma, PrismaClient } from "./generated/prisma/client";
import { databaseNow } from "./database-clock";
import type { Db } from "./db";

/**
 * What one `inTransaction` run remembers between statements. Each statement is a round trip with
 * ~0.3 ms of client work around it, and a mutation is a dozen of them, so the two things every
 * mutation repeats are kept here instead of sent again (docs/decisions/007-fewer-statements-per-mutation.md).
 */
type TransactionScope = {
  /** Appended events, in order; written by one multi-row INSERT just before commit. */
  events: Prisma.EventCreateManyInput[];
  /** Agents whose row lock this transaction holds. Row locks last until commit. */
  lockedAgentIds: Set<string>;
  /** Run once the transaction has committed, never if it rolls back. */
  afterCommit: (() => void)[];
};

const scopes = new WeakMap<object, TransactionScope>();

/** The scope of a client opened by `inTransaction`; undefined for the pool or another transaction. */
export function transactionScope(db: Db): TransactionScope | undefined {
  return scopes.get(db);
}

/**
 * Runs `work` in one interactive transaction, then writes the events it appended. The events are
 * still part of the transaction (they exist exactly when its changes do), and their ids are taken
 * at its very end, which also narrows the window in which a later transaction's event can commit
 * with a higher id first.
 */
export async function inTransaction<T>(
  db: PrismaClient,
  work: (tx: Prisma.TransactionClient) => Promise<T>,
): Promise<T> {
  let committed: TransactionScope | undefined;
  const result = await db.$transaction(async (tx) => {
    const scope: TransactionScope = { events: [], lockedAgentIds: new Set(), afterCommit: [] };
    scopes.set(tx, scope);
    const result = await work(tx);
    if (scope.events.length > 0) {
      // Stamped now, not with the transaction's start (the column's default): the event feed's
      // gap wait reads an event's age from it, and one from a transaction that had waited on a
      // lock would be too old, the moment it commits, to hold a reader back at a gap below it.
      const createdAt = databaseNow();
      await tx.event.createMany({
        data: scope.events.map((event) => ({ ...event, createdAt })),
      });
    }
    committed = scope;
    return result;
  });
  for (const callback of committed?.afterCommit ?? []) callback();
  return result;
}

/**
 * Runs `callback` once what `db` wrote is visible to everyone: after the commit of the
 * `inTransaction` run `db` belongs to, or now when `db` autocommits each statement.
 */
export function runAfterCommit(db: Db, callback: () => void): void {
  const scope = transactionScope(db);
  if (scope) scope.afterCommit.push(callback);
  else callback();
}
