import type { HumanActor } from "../auth/actor";
import type { Db } from "../db";
import { findRequestView } from "../requests/data";
import { takeNewRequestRow } from "../requests/new-rows";
import type { RequestViewWire } from "../shared/api/request";
import type { ConsoleEvent } from "../shared/realtime/contract";

/**
 * The request whose row follows an event to the console (decision 035): a new request for the
 * Lead, which every Lead's inbox adds at once. Everything else about a request its event carries,
 * or one `GET /requests/{id}` reads (docs/PROTOCOL.md, "What an event carries").
 */
export function requestRowCarriedBy(event: ConsoleEvent): string | null {
  return event.kind === "request.created" && event.data.target === "lead"
    ? event.data.requestId
    : null;
}

/**
 * Who is sent a row: Leads, the people the pending list is for. `GET /requests/{id}` shows every
 * human the same view, so a Lead is never sent more than the API would show them; a viewer may
 * read it too, but fetches it as before, so a row never reaches a socket that does not act on it.
 */
export function mayReceiveRequestRows(actor: HumanActor): boolean {
  return actor.role === "lead";
}

/**
 * The row, once per event for every socket on this node: as this node created it, or read; none
 * if it cannot be read.
 */
export async function readRequestRow(
  db: Db,
  requestId: string,
): Promise<RequestViewWire | undefined> {
  const created = await takeNewRequestRow(requestId);
  if (created) return created;
  try {
    return (await findRequestView(db, requestId)) ?? undefined;
  } catch (error) {
    // The consoles fall back to fetching the row, as they do for an event replayed without one.
    console.error("[console] could not read a new request's row", error);
    return undefined;
  }
}
