import { OwnWrites } from "../realtime/own-writes";
import type { RequestView } from "./views";

/**
 * The rows of requests for the Lead that this node has just created, kept until their
 * `request.created` event is published here and the row follows it to the Leads' consoles
 * (lib/realtime/request-rows.ts, decision 035). The row is the one the creating statement
 * returned, so the node that wrote it does not read it back; another node reads it as before.
 * The common submission commits on its own, so its row is expected before its statement is sent
 * (lib/realtime/own-writes.ts).
 */
const newRows = new OwnWrites<RequestView>("handshakeNewRequestRows");

export function rememberNewRequestRow(view: RequestView, now = Date.now()): void {
  if (view.target === "lead") newRows.keep(view.id, view, now);
}

/**
 * Before a statement that creates request `requestId` for the Lead and commits on its own is
 * sent: `row` is what it returns, undefined if it writes nothing or fails.
 */
export function expectNewRequestRow(
  requestId: string,
  row: Promise<RequestView | undefined>,
  now = Date.now(),
): void {
  newRows.keep(requestId, row, now);
}

/**
 * The row this node created for this request, at most once (the event is published once):
 * undefined when this node holds none, or when its statement's answer does not come in time.
 */
export async function takeNewRequestRow(
  requestId: string,
  now = Date.now(),
): Promise<RequestView | undefined> {
  const view = await newRows.take(requestId, now);
  return view?.target === "lead" ? view : undefined;
}
