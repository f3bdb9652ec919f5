import type { ClientGone } from "../http/client-gone";
import type { ConsoleEvent } from "../shared/realtime/contract";
import type { EventHub } from "./event-hub";

/** Waits this long or longer end at a random point of their last tenth. */
const SPREAD_FROM_SECONDS = 10;

/**
 * When a long-poll asked to wait `waitSeconds` ends if nothing wakes it. The contract holds a
 * long-poll *up to* its wait: a long one ends somewhere in its last tenth, so that long-polls
 * opened together (a node restarted, a team started at once) do not all end together, each cycle
 * after cycle, in a burst of a thousand answers, reissues and reads that stalls the node.
 */
export function longPollDeadline(
  startedAt: number,
  waitSeconds: number,
  random: () => number = Math.random,
): number {
  const waitMs = waitSeconds * 1000;
  const spreadMs = waitSeconds >= SPREAD_FROM_SECONDS ? random() * (waitMs / 10) : 0;
  return startedAt + waitMs - spreadMs;
}

/**
 * What a long-poll reads, and when it is done. An object with methods rather than three closures:
 * a waiting request holds it for its whole wait, and each closure would also carry the `name`
 * property tsx's esbuild gives a named function (decision 041).
 */
export type LongPollSource<T> = {
  read(): Promise<T>;
  isDone(value: T): boolean;
  /** What the waking event alone answers, without the read; undefined, and the caller reads. */
  answerWoken?(event: ConsoleEvent): Promise<T | undefined>;
};

/**
 * Reads until `isDone` accepts what was read or the deadline passes, and returns the last read.
 * Each read is made with the wait already in place, so what commits between the read and the
 * wait still wakes it. There is no timed re-check, and no read when the wait ends unwoken (the
 * deadline, or the client gone): the bridge publishes every committed event (NOTIFY, backed by its
 * own poll), so an unwoken wait has nothing new to read but what committed in its last moments,
 * which the caller's next long-poll reads first. A thousand long-polls ending together would
 * otherwise cost a thousand reads that answer nothing. A woken wait reads again, unless
 * `answerWoken` answers from the event that woke it (an inbox woken by a decision made on this
 * node, decision 040).
 */
export async function readUntil<T>(options: {
  hub: EventHub;
  key: string;
  deadline: number;
  clientGone: ClientGone | undefined;
  source: LongPollSource<T>;
}): Promise<T> {
  const { hub, key, deadline, clientGone, source } = options;
  for (;;) {
    const wait = hub.wait(key, Math.max(0, deadline - Date.now()), clientGone);
    try {
      const value = await source.read();
      if (source.isDone(value) || Date.now() >= deadline || clientGone?.aborted) return value;
      const event = await wait.woken;
      if (event === null) return value;
      const answered = await source.answerWoken?.(event);
      if (answered !== undefined) return answered;
    } finally {
      wait.cancel();
    }
  }
}
