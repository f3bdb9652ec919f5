import type { RequestView } from "./views";

/**
 * The rows of requests for the Lead that this node has just created, kept until their
 * `request.created` event is published here and the row follows it to the Leads' consoles
 * (lib/realtime/request-rows.ts, decision 035). The row is the one the creating statement
 * returned, so the node that wrote it does not read it back; another node reads it as before.
 *
 * A statement that commits on its own (the common submission) tells PostgreSQL's listeners at
 * the moment it commits, on another connection than the one its answer comes back on: the event
 * is often published here before the answer is read. Such a row is expected before the statement
 * is sent and is waited for, briefly, when its event comes first.
 *
 * An event is published milliseconds after its commit. A row not taken by then never will be (a
 * rolled-back transaction, no Lead console on this node): rows are kept for seconds and few at a
 * time, so agents submitting large plans with nobody watching cannot make the node hold them.
 */
const MAX_NEW_ROWS = 256;
const MAX_AGE_MS = 10_000;
/** A statement committed but its answer has not been read after this long: the row is read. */
const MAX_ANSWER_WAIT_MS = 1_000;

type NewRow = {
  view: RequestView | Promise<RequestView | undefined>;
  rememberedAt: number;
};

// server.ts (run by tsx) and Next's bundled code load modules separately; one map per process.
const holder = globalThis as typeof globalThis & { handshakeNewRequestRows?: Map<string, NewRow> };
function newRows(): Map<string, NewRow> {
  holder.handshakeNewRequestRows ??= new Map();
  return holder.handshakeNewRequestRows;
}

export function rememberNewRequestRow(view: RequestView, now = Date.now()): void {
  if (view.target === "lead") keepRow(view.id, view, now);
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
  keepRow(requestId, row, now);
}

function keepRow(requestId: string, view: NewRow["view"], now: number): void {
  const rows = newRows();
  rows.set(requestId, { view, rememberedAt: now });
  // A map iterates in insertion order: the oldest rows come first.
  for (const [id, row] of rows) {
    if (rows.size <= MAX_NEW_ROWS && row.rememberedAt > now - MAX_AGE_MS) break;
    rows.delete(id);
  }
}

/**
 * The row this node created for this request, at most once (the event is published once):
 * undefined when this node holds none, or when its statement's answer does not come in time.
 */
export async function takeNewRequestRow(
  requestId: string,
  now = Date.now(),
): Promise<RequestView | undefined> {
  const rows = newRows();
  const row = rows.get(requestId);
  rows.delete(requestId);
  if (!row || row.rememberedAt <= now - MAX_AGE_MS) return undefined;
  if (!(row.view instanceof Promise)) return row.view;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), MAX_ANSWER_WAIT_MS);
  });
  try {
    const view = await Promise.race([row.view, late]);
    return view?.target === "lead" ? view : undefined;
  } finally {
    clearTimeout(timer);
  }
}
