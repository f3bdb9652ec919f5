import { afterEach, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { GAP_WAIT_MS } from "../../lib/events/data";
import { openEvent as openEventOn, type OpenEvent } from "../support/open-event";
import { api, lead } from "./fixtures";

type EventPage = { items: { id: number; kind: string }[]; nextCursor: string | null };

const openEvents: OpenEvent[] = [];

afterEach(async () => {
  for (const open of openEvents.splice(0)) await open.end("rollback");
});

async function openEvent(): Promise<OpenEvent> {
  const open = await openEventOn("test:page");
  openEvents.push(open);
  return open;
}

async function commitEvent(): Promise<number> {
  const row = await getDb().event.create({
    data: { kind: "test.committed", subject: "test:page", data: {} },
    select: { id: true },
  });
  return Number(row.id);
}

async function page(query: string): Promise<EventPage> {
  const response = await api.events((await lead()).headers, query);
  expect(response.status).toBe(200);
  return response.json as unknown as EventPage;
}

describe("GET /events", () => {
  it("stops before an id whose transaction is still open, then returns both in id order", async () => {
    const before = await commitEvent();
    const inFlight = await openEvent();
    const later = await commitEvent();
    expect(later).toBeGreaterThan(inFlight.id);

    // A reader that took `later` now would move its cursor past `inFlight` and never see it.
    expect((await page(`?after=${before - 1}`)).items.map((event) => event.id)).toEqual([before]);
    expect((await page(`?after=${before}`)).items).toEqual([]);
    // Newest first starts below it too: a late subscriber starting from the newest id would pass
    // it as well.
    expect((await page(`?order=desc&limit=1`)).items.map((event) => event.id)).toEqual([before]);
    expect((await page(`?after=${before}&order=desc`)).items).toEqual([]);

    await inFlight.end("commit");
    const caughtUp = await page(`?after=${before}`);
    expect(caughtUp.items.map((event) => event.id)).toEqual([inFlight.id, later]);
    expect(caughtUp.nextCursor).toBeNull();
    expect((await page(`?after=${before}&order=desc`)).items.map((event) => event.id)).toEqual([
      later,
      inFlight.id,
    ]);
  });

  it("looks for an id in flight newest first among the newest 500 ids", async () => {
    const before = await commitEvent();
    const inFlight = await openEvent();
    await getDb().event.createMany({
      data: Array.from({ length: 600 }, () => ({ kind: "test.committed", subject: "test:page" })),
    });
    const newest = await commitEvent();
    // 601 ids above it: the newest 500 show no gap, so the newest id is named.
    expect((await page(`?order=desc&limit=1`)).items.map((event) => event.id)).toEqual([newest]);
    expect((await page(`?after=${before}`)).items).toEqual([]);
    await inFlight.end("commit");
  });

  it("takes a gap as permanent once the event after it is older than the wait", async () => {
    const before = await commitEvent();
    const rolledBack = await openEvent();
    await rolledBack.end("rollback");
    // At or before the later event's `created_at` (its transaction's start), to the millisecond.
    const laterStartedBy = Date.now();
    const later = await commitEvent();

    expect((await page(`?after=${before}`)).items).toEqual([]);
    let items: EventPage["items"] = [];
    while (items.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      items = (await page(`?after=${before}`)).items;
    }
    expect(items.map((event) => event.id)).toEqual([later]);
    // `created_at` keeps milliseconds, rounded: the wait may read a millisecond short.
    expect(Date.now() - laterStartedBy).toBeGreaterThanOrEqual(GAP_WAIT_MS - 2);
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
    expect(full.items.map((event) => event.id)).toEqual([first]);
    expect(full.nextCursor).toBe(String(first));
    const short = await page(`?after=${full.nextCursor}&limit=5`);
    expect(short.items.map((event) => event.id)).toEqual([second]);
    expect(short.nextCursor).toBeNull();
    await inFlight.end("commit");
  });
});
