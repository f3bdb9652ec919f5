import { z } from "zod";

// The times both PostgreSQL's timestamptz and a JavaScript Date hold. The ISO format alone admits
// year 0, which PostgreSQL has not, and through a large offset a time past 9999, which it stores
// but Prisma reads back as an invalid Date: either was a 500 where bad input is a 400.
const EARLIEST_MS = Date.parse("0001-01-01T00:00:00.000Z");
const LATEST_MS = Date.parse("9999-12-31T23:59:59.999Z");

/** An ISO 8601 time (with an offset when `offset` is set) from year 1 to year 9999 in UTC. */
export function instantSchema(options: { offset?: boolean } = {}) {
  return z.iso.datetime(options).refine((value) => {
    const ms = Date.parse(value);
    return ms >= EARLIEST_MS && ms <= LATEST_MS;
  }, "a time from year 1 to year 9999 (UTC)");
}
