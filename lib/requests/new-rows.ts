import type { RequestView } from "./views";

/**
 * The rows of requests for the Lead that this node has just created, kept until their
 * `request.created` event is published here and the row follows it to the Leads' consoles
 * (lib/realtime/request-rows.ts, decision 035). The row is the one the creating statement
 * returned, so the node that wrote it does not read it back; another node reads it as before.
 * A row whose event never reaches this node (a rolled-back transaction, no console attached) is
 * pushed out by newer ones.
 */
const MAX_NEW_ROWS = 1_000;

// server.ts (run by tsx) and Next's bundled code load modules separately; one map per process.
const holder = globalThis as typeof globalThis & {
  handshakeNewRequestRows?: Map<string, RequestView>;
};
function newRows(): Map<string, RequestView> {
  holder.handshakeNewRequestRows ??= new Map();
  return holder.handshakeNewRequestRows;
}

export function rememberNewRequestRow(view: RequestView): void {
  if (view.target !== "lead") return;
  const rows = newRows();
  rows.set(view.id, view);
  if (rows.size > MAX_NEW_ROWS) {
    const oldest = rows.keys().next();
    if (!oldest.done) rows.delete(oldest.value);
  }
}

/** The row this node created for this request, at most once: the event is published once. */
export function takeNewRequestRow(requestId: string): RequestView | undefined {
  const rows = newRows();
  const row = rows.get(requestId);
  rows.delete(requestId);
  return row;
}
