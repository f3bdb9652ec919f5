import type { Db } from "../db";
import type { Prisma } from "../generated/prisma/client";
import type { EventKind } from "./kinds";

/**
 * Appends to the one log. Call it inside the transaction that makes the change, so the event
 * exists exactly when the change does; the insert trigger NOTIFYs the id on commit.
 */
export async function appendEvent(
  db: Db,
  kind: EventKind,
  subject: string,
  data: Prisma.InputJsonObject = {},
): Promise<number> {
  const event = await db.event.create({ data: { kind, subject, data }, select: { id: true } });
  return Number(event.id);
}
