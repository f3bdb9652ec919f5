import type { Db } from "../db";
import type { Prisma } from "../generated/prisma/client";
import { transactionScope } from "../transaction";
import type { EventKind, EventPayload } from "../shared/events/catalog";

/**
 * Appends to the one log. Call it inside the transaction that makes the change, so the event
 * exists exactly when the change does; the insert trigger NOTIFYs it on commit. Inside
 * `inTransaction` the event is written with the others at the transaction's end. The payload is
 * checked against the catalog at compile time (lib/shared/events/catalog.ts).
 */
export async function appendEvent<K extends EventKind>(
  db: Db,
  kind: K,
  subject: string,
  payload: EventPayload<K>,
): Promise<void> {
  const data = payload as Prisma.InputJsonObject;
  const scope = transactionScope(db);
  if (scope) scope.events.push({ kind, subject, data });
  else await db.event.create({ data: { kind, subject, data }, select: { id: true } });
}
