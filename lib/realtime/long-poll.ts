import type { ClientGone } from "../http/client-gone";
import type { EventHub, WakingEvent, Wait, Waiter } from "./event-hub";

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
 * What a long-poll reads, and when it is done. An object with methods rather than closures: a
 * waiting request holds it for its whole wait, and each closure would also carry the `name`
 * property tsx's esbuild gives a named function (decision 041).
 */
export type LongPollSource<T> = {
  read(): Promise<T>;
  isDone(value: T): boolean;
  /** What the waking event alone answers, without the read; undefined, and the caller reads. */
  answerWoken?(event: WakingEvent): Promise<T | undefined>;
  /**
   * Called when a read leaves the long-poll to wait, the first time: takes what waiting holds
   * (an open long-poll slot) or refuses by throwing. Released when the long-poll ends.
   */
  hold?(): { release(): void };
};

/**
 * Where a long-poll's answer goes, once: its last read, or why it has none. Called in a microtask
 * of its own, as a promise's reactions are, so that what it does never runs inside the hub's
 * publish. It must not throw: nothing is left to answer for it.
 */
export type AnswerSink<T> = { answer(value: T): void; fail(error: unknown): void };

/** What a long-poll waits on and reads. */
export type LongPollOptions<T> = {
  hub: EventHub;
  key: string;
  deadline: number;
  clientGone: ClientGone | undefined;
  source: LongPollSource<T>;
};

/** No event has woken the wait since the read began. */
const NOT_WOKEN = Symbol("notWoken");

/**
 * Reads until `isDone` accepts what was read or the deadline passes, and answers the last read.
 * Each read is made with the wait already in place, so what commits between the read and the
 * wait still wakes it. There is no timed re-check, and no read when the wait ends unwoken (the
 * deadline, or the client gone): the bridge publishes every committed event (NOTIFY, backed by its
 * own poll), so an unwoken wait has nothing new to read but what committed in its last moments,
 * which the caller's next long-poll reads first. A thousand long-polls ending together would
 * otherwise cost a thousand reads that answer nothing. A woken wait reads again, unless
 * `answerWoken` answers from the event that woke it (an inbox woken by a decision made on this
 * node, decision 040).
 *
 * Callbacks rather than an async loop: a waiting long-poll then holds this object, its wait and
 * its sink, where suspended async frames held about a kilobyte more, and a promise of its answer
 * with the reactions awaiting it about half a kilobyte (issue 18).
 */
class LongPoll<T> implements Waiter {
  private readonly hub: EventHub;
  private readonly key: string;
  private readonly deadline: number;
  private readonly clientGone: ClientGone | undefined;
  private readonly source: LongPollSource<T>;
  private wait: Wait | undefined;
  private isReading = false;
  private woken: WakingEvent | null | typeof NOT_WOKEN = NOT_WOKEN;
  private last: T | undefined;
  private held: { release(): void } | undefined;
  private isOver = false;

  constructor(
    options: LongPollOptions<T>,
    private readonly sink: AnswerSink<T>,
  ) {
    this.hub = options.hub;
    this.key = options.key;
    this.deadline = options.deadline;
    this.clientGone = options.clientGone;
    this.source = options.source;
    this.read();
  }

  /** The hub's call: during a read it is kept for the read's end. */
  wake(event: WakingEvent | null): void {
    this.wait = undefined;
    if (this.isReading) this.woken = event;
    else this.onWoken(event);
  }

  private read(): void {
    // Before the wait is made: a client already gone wakes it at once, and that waits for the read.
    this.isReading = true;
    this.woken = NOT_WOKEN;
    const remainingMs = this.deadline - Date.now();
    if (remainingMs > 0) {
      this.wait = this.hub.wait(this.key, remainingMs, this.clientGone, this);
    }
    let reading: Promise<T>;
    try {
      reading = this.source.read();
    } catch (error) {
      return this.fail(error);
    }
    reading.then(
      (value) => this.onRead(value),
      (error: unknown) => this.fail(error),
    );
  }

  // What a source throws (a refused hold, a broken read) fails the long-poll: nothing escapes
  // into the hub's publish, which calls `wake`, nor leaves the answer unsettled.
  private onRead(value: T): void {
    this.isReading = false;
    this.last = value;
    const woken = this.woken;
    try {
      // A read made with no wait in place (its deadline had passed) ends the long-poll, even if
      // the clock has since stepped back: nothing else would end it.
      const hadNoWait = woken === NOT_WOKEN && this.wait === undefined;
      if (
        woken === null ||
        hadNoWait ||
        this.source.isDone(value) ||
        Date.now() >= this.deadline ||
        this.clientGone?.aborted
      ) {
        this.end(value);
      } else if (woken !== NOT_WOKEN) {
        this.onWoken(woken);
      } else if (this.held === undefined && this.source.hold) {
        this.held = this.source.hold();
      }
    } catch (error) {
      this.fail(error);
    }
  }

  private onWoken(event: WakingEvent | null): void {
    if (event === null) return this.end(this.last as T);
    let answering: Promise<T | undefined> | undefined;
    try {
      answering = this.source.answerWoken?.(event);
    } catch (error) {
      return this.fail(error);
    }
    if (answering === undefined) return this.read();
    answering.then(
      (answered) => (answered === undefined ? this.read() : this.end(answered)),
      (error: unknown) => this.fail(error),
    );
  }

  private end(value: T): void {
    if (this.finish()) queueMicrotask(() => this.sink.answer(value));
  }

  private fail(error: unknown): void {
    if (this.finish()) queueMicrotask(() => this.sink.fail(error));
  }

  private finish(): boolean {
    if (this.isOver) return false;
    this.isOver = true;
    this.wait?.cancel();
    this.wait = undefined;
    this.held?.release();
    return true;
  }
}

/**
 * A long-poll as a route answers it, started by whoever takes its answer, once: the route by a
 * sink (`answerTo`), which is all the answer holds while it waits; a caller that awaits it, by a
 * promise (`read`).
 */
export class LongPollAnswer<T> {
  private isStarted = false;

  constructor(private readonly options: LongPollOptions<T>) {}

  /** Reads until done or the deadline (`LongPoll`), and hands the last read to `sink`. */
  answerTo(sink: AnswerSink<T>): void {
    // A second start would be a second long-poll: reads and a slot of its own.
    if (this.isStarted) throw new Error("a long-poll is started once");
    this.isStarted = true;
    new LongPoll(this.options, sink);
  }

  /** The same, as a promise. */
  read(): Promise<T> {
    return new Promise((resolve, reject) => this.answerTo({ answer: resolve, fail: reject }));
  }
}
