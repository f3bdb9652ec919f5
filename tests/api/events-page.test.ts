import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { GAP_WAIT_MS } from "../../lib/events/data";
import { appendEvent } from "../../lib/events/mutations";
import { inTransaction } from "../../lib/transaction";
import { openEvent as openEventOn, type OpenEvent } from "../support/open-event";
import { api, lead } from "./fixtures";

type EventPage = {
  items: { id: number; kind: string; subject: string }[];
  nextCursor: string | null;
};

const openEvents: OpenEvent[] = [];

afterEach(async () => {
  for (const open of openEvents.splice(0)) await open.end("rollback");
});

// Other test files write to the same log meanwhile: each test has a subject of its own and reads
// its own events off a page, and asserts of the others' only what holds whatever they are.
let subject = "";

beforeEach(() => {
  subject = `test:page-${randomUUID()}`;
});

async function openEvent(): Promise<OpenEvent> {
  const open = await openEventOn(subject);
  openEvents.push(open);
  return open;
}

async function commitEvent(): Promise<number> {
  const row = await getDb().event.create({
    data: { kind: "test.committed", subject, data: {} },
    select: { id: true },
  });
  return Number(row.id);
}

function ours(page: EventPage): number[] {
  return page.items.filter((event) => event.subject === subject).map((event) => event.id);
}

/** Reads the page until this test's events on it are `expected` (another's gap may hold them). */
async function expectOursSoon(query: string, expected: number[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  let found = ours(await page(query));
  while (JSON.stringify(found) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    found = ours(await page(query));
  }
  expect(found).toEqual(expected);
}

async function page(query: string): Promise<EventPage> {
  const response = await api.events((await lead()).headers, query);
  expect(response.status).toBe(200);
  return response.json as unknown as EventPage;
}

/**
 * Runs `attempt` again, at most five times, while it took GAP_WAIT_MS or longer, then runs the
 * checks it returns. Its reads count on an open id's gap being young; on a loaded machine a pause
 * can age it, and then the server rightly takes the gap as permanent.
 */
async function whileTheGapIsYoung(attempt: () => Promise<() => void>): Promise<void> {
  for (let tries = 1; ; tries++) {
    const startedAt = Date.now();
    const check = await attempt();
    if (Date.now() - startedAt < GAP_WAIT_MS || tries === 5) return check();
    for (const open of openEvents.splice(0)) await open.end("rollback");
  }
}

describe("GET /events", () => {
  it("stops before an id whose transaction is still open, then returns both in id order", async () => {
    let before = 0;
    let later = 0;
    let inFlight: OpenEvent | undefined;
    await whileTheGapIsYoung(async () => {
      before = await commitEvent();
      const open = await openEvent();
      inFlight = open;
      later = await commitEvent();
      // A reader that took `later` now would move its cursor past `inFlight` and never see it.
      const oldestFirst = await page(`?after=${before - 1}`);
      // Newest first starts below it too: a late subscriber starting from the newest id would
      // pass it as well.
      const [newest] = (await page(`?order=desc&limit=1`)).items;
      const newestFirst = await page(`?after=${before}&order=desc`);
      return () => {
        expect(later).toBeGreaterThan(open.id);
        expect(ours(oldestFirst)).toEqual([before]);
        expect(oldestFirst.items.every((event) => event.id < open.id)).toBe(true);
        expect(newest?.id).toBeLessThan(open.id);
        expect(newestFirst.items.every((event) => event.id < open.id)).toBe(true);
      };
    });
    const committed = inFlight as OpenEvent;
    await committed.end("commit");
    await expectOursSoon(`?after=${before}`, [committed.id, later]);
    await expectOursSoon(`?after=${before}&order=desc`, [later, committed.id]);
  });

  it("looks for an id in flight newest first among the newest 500 ids", async () => {
    await whileTheGapIsYoung(async () => {
      const before = await commitEvent();
      await openEvent();
      await getDb().event.createMany({
        data: Array.from({ length: 600 }, () => ({ kind: "test.committed", subject })),
      });
      const newest = await commitEvent();
      // 601 ids above it: the newest 500 show no gap, so the newest id is named.
      const [named] = (await page(`?order=desc&limit=1`)).items;
      const oursAfter = ours(await page(`?after=${before}`));
      return () => {
        expect(named?.id).toBeGreaterThanOrEqual(newest);
        expect(oursAfter).toEqual([]);
      };
    });
  });

  it("takes a gap as permanent once the event after it is older than the wait", async () => {
    const before = await commitEvent();
    const rolledBack = await openEvent();
    await rolledBack.end("rollback");
    // At or before the later event's `created_at` (its transaction's start), to the millisecond.
    const laterStartedBy = Date.now();
    const later = await commitEvent();

    expect(ours(await page(`?after=${before}`))).toEqual([]);
    await expectOursSoon(`?after=${before}`, [later]);
    // `created_at` keeps milliseconds, rounded: the wait may read a millisecond short.
    expect(Date.now() - laterStartedBy).toBeGreaterThanOrEqual(GAP_WAIT_MS - 2);
  });

  it("takes an event's age from when it was written, not from when its transaction began", async () => {
    // Review of decision 083: a transaction writes its events just before it commits. Stamped
    // with the transaction's start, an event from one that had waited (on an agent's lock) was
    // already too old, when it committed, to hold a reader back at an id still in flight below
    // it, and the reader's cursor passed that id for good.
    for (let tries = 1; ; tries++) {
      let inFlight: OpenEvent | undefined;
      await inTransaction(getDb(), async (tx) => {
        await tx.$executeRaw`SELECT pg_sleep(${(GAP_WAIT_MS + 300) / 1_000}::float8)`;
        inFlight = await openEvent();
        await appendEvent(tx, "task.created", subject, { taskId: randomUUID(), title: "late" });
      });
      const writtenBy = Date.now();
      const below = inFlight as OpenEvent;
      const found = ours(await page(`?after=${below.id - 1}`));
      if (Date.now() - writtenBy < GAP_WAIT_MS / 2 || tries === 5) {
        expect(found).toEqual([]);
        const [late] = await getDb().event.findMany({ where: { subject, id: { gt: below.id } } });
        expect(late?.kind).toBe("task.created");
        return;
      }
      for (const open of openEvents.splice(0)) await open.end("rollback");
    }
  });

  it("reads after a cursor beyond 32 bits, up to the largest the query accepts", async () => {
    for (const after of [2 ** 31, Number.MAX_SAFE_INTEGER]) {
      expect((await page(`?after=${after}`)).items).toEqual([]);
    }
  });

  it("returns the events below a gap and keeps paging by a full page's cursor", async () => {
    const first = await commitEvent();
    const second = await commitEvent();
    const inFlight = await openEvent();
    await commitEvent();

    const full = await page(`?after=${first - 1}&limit=1`);
    expect(ours(full)).toEqual([first]);
    expect(full.nextCursor).toBe(String(first));
    const rest = await page(`?after=${full.nextCursor}&limit=500`);
    expect(ours(rest)).toEqual([second]);
    expect(rest.items.every((event) => event.id < inFlight.id)).toBe(true);
    expect(rest.nextCursor).toBeNull();
    await inFlight.end("commit");
  });
});
