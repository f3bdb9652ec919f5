import type { Db } from "../db";
import type { Prisma } from "../generated/prisma/client";
import { transactionScope } from "../transaction";
import type { EventKind } from "./kinds";

/**
 * Appends to the one log. Call it inside the transaction that makes the change, so the event
 * exists exactly when the change does; the insert trigger NOTIFYs the id on commit. Inside
 * `inTransaction` the event is written with the others at the transaction's end.
 */
export async function appendEvent(
  db: Db,
  kind: EventKind,
  subject: string,
  data: Prisma.InputJsonObject = {},
): Promise<void> {
  const scope = transactionScope(db);
  if (scope) scope.events.push({ kind, subject, data });
  else await db.event.create({ data: { kind, subject, data }, select: { id: true } });
}
