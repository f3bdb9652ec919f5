import type { RequestView } from "./views";

/**
 * The rows of requests for the Lead that this node has just created, kept until their
 * `request.created` event is published here and the row follows it to the Leads' consoles
 * (lib/realtime/request-rows.ts, decision 035). The row is the one the creating statement
 * returned, so the node that wrote it does not read it back; another node reads it as before.
 *
 * An event is published milliseconds after its commit. A row not taken by then never will be (a
 * rolled-back transaction, no Lead console on this node): rows are kept for seconds and few at a
 * time, so agents submitting large plans with nobody watching cannot make the node hold them.
 */
const MAX_NEW_ROWS = 256;
const MAX_AGE_MS = 10_000;

type NewRow = { view: RequestView; rememberedAt: number };

// server.ts (run by tsx) and Next's bundled code load modules separately; one map per process.
const holder = globalThis as typeof globalThis & { handshakeNewRequestRows?: Map<string, NewRow> };
function newRows(): Map<string, NewRow> {
  holder.handshakeNewRequestRows ??= new Map();
  return holder.handshakeNewRequestRows;
}

export function rememberNewRequestRow(view: RequestView, now = Date.now()): void {
  if (view.target !== "lead") return;
  const rows = newRows();
  rows.set(view.id, { view, rememberedAt: now });
  // A map iterates in insertion order: the oldest rows come first.
  for (const [id, row] of rows) {
    if (rows.size <= MAX_NEW_ROWS && row.rememberedAt > now - MAX_AGE_MS) break;
    rows.delete(id);
  }
}

/** The row this node created for this request, at most once: the event is published once. */
export function takeNewRequestRow(requestId: string, now = Date.now()): RequestView | undefined {
  const rows = newRows();
  const row = rows.get(requestId);
  rows.delete(requestId);
  return row && row.rememberedAt > now - MAX_AGE_MS ? row.view : undefined;
}
