/**
 * What this node has just written, kept for the event that announces it here, so that what
 * follows that event on this node (a new request's row, decision 035; a decision's message,
 * decision 040) is not read back from the database.
 *
 * A statement that commits on its own tells PostgreSQL's listeners at the moment it commits, on
 * another connection than the one its answer comes back on: the event is often published here
 * before the answer is read. Such a write is kept before the statement is sent, as the promise of
 * what it writes, and waited for when its event comes first, at most a second; then the caller
 * reads, as another node does.
 *
 * An event is published milliseconds after its commit. A write not looked for by then never will
 * be (a rolled-back transaction, nobody waiting on this node): writes are kept for seconds and few
 * at a time, so a burst of large writes nobody watches cannot make the node hold them.
 */
const MAX_KEPT = 256;
const MAX_AGE_MS = 10_000;
const MAX_ANSWER_WAIT_MS = 1_000;

type Kept<T> = { value: T | Promise<T | undefined>; keptAt: number };

export class OwnWrites<T> {
  /**
   * `holderName` names the map on `globalThis`: server.ts (run by tsx) and Next's bundled code
   * load modules separately, and both must see one map per process.
   */
  constructor(private readonly holderName: string) {}

  private get kept(): Map<string, Kept<T>> {
    const holder = globalThis as unknown as Record<string, Map<string, Kept<T>> | undefined>;
    return (holder[this.holderName] ??= new Map());
  }

  /** A write under `key`: what it wrote, or the promise of it (undefined if it wrote nothing). */
  keep(key: string, value: T | Promise<T | undefined>, now = Date.now()): void {
    const kept = this.kept;
    kept.set(key, { value, keptAt: now });
    // A map iterates in insertion order: the oldest come first.
    for (const [oldKey, entry] of kept) {
      if (kept.size <= MAX_KEPT && entry.keptAt > now - MAX_AGE_MS) break;
      kept.delete(oldKey);
    }
  }

  /** What was written under `key`, once: the event that announces it is published once. */
  take(key: string, now = Date.now()): Promise<T | undefined> {
    const entry = this.kept.get(key);
    this.kept.delete(key);
    return answerOf(entry, now);
  }

  /** What was written under `key`, for every reader its event wakes. */
  find(key: string, now = Date.now()): Promise<T | undefined> {
    return answerOf(this.kept.get(key), now);
  }
}

/** Undefined when nothing is kept, or when the statement's answer is a second late. */
async function answerOf<T>(entry: Kept<T> | undefined, now: number): Promise<T | undefined> {
  if (!entry || entry.keptAt <= now - MAX_AGE_MS) return undefined;
  if (!(entry.value instanceof Promise)) return entry.value;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), MAX_ANSWER_WAIT_MS);
  });
  try {
    return await Promise.race([entry.value, late]);
  } finally {
    clearTimeout(timer);
  }
}
