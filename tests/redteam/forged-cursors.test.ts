import { afterAll, describe, expect, it } from "vitest";
import { agentTimeline as timelineRoute } from "../../lib/api/v1/agents";
import { requests as requestsRoute } from "../../lib/api/v1/requests";
import { getDb } from "../../lib/db";
import type { RouteHandler } from "../../lib/http/route";
import { callRoute } from "../route-client";
import { lead, registerAgent } from "../api/fixtures";

afterAll(() => getDb().$disconnect());

/**
 * Red team: a page cursor is base64url JSON, "checked field by field on the way back in, so a
 * forged or mangled cursor is a 400, never a query" (lib/http/cursor.ts). Some fields pass their
 * schema yet break the query: a timeline id that is not a decimal bigint (BigInt("abc") throws),
 * one beyond int8, and a timestamp in year 0000 (a valid ISO datetime PostgreSQL refuses). Each
 * answered 500 INTERNAL.
 */
const encode = (fields: Record<string, unknown>) =>
  Buffer.from(JSON.stringify(fields)).toString("base64url");

describe("forged page cursors (red team)", () => {
  it("a cursor that passes its schema but names no real position is a 400, never a 500", async () => {
    const { headers } = await lead();
    const agent = await registerAgent();
    const forged: {
      what: string;
      route: RouteHandler;
      path: string;
      params?: Record<string, string>;
    }[] = [
      ...[
        { at: "2024-01-01T00:00:00.000Z", rank: 1, id: "abc" },
        { at: "2024-01-01T00:00:00.000Z", rank: 4, id: "99999999999999999999999" },
        { at: "0000-01-01T00:00:00.000Z", rank: 2, id: "x" },
      ].map((cursor) => ({
        what: `timeline ${JSON.stringify(cursor)}`,
        route: timelineRoute.GET,
        path: `/api/v1/agents/${agent.name}/timeline?before=${encode(cursor)}`,
        params: { name: agent.name },
      })),
      {
        what: "requests newest-first, createdAt in year 0000",
        route: requestsRoute.GET,
        path: `/api/v1/requests?order=newest&cursor=${encode({
          order: "newest",
          createdAt: "0000-01-01T00:00:00Z",
          id: `req_${"0".repeat(32)}`,
        })}`,
      },
      {
        what: "requests oldest-first, expiresAt in year 0000",
        route: requestsRoute.GET,
        path: `/api/v1/requests?order=oldest&cursor=${encode({
          order: "oldest",
          createdAt: "2024-01-01T00:00:00Z",
          expiresAt: "0000-06-01T00:00:00Z",
          id: `req_${"0".repeat(32)}`,
        })}`,
      },
    ];
    const answers: string[] = [];
    for (const { what, route, path, params } of forged) {
      let status: number;
      try {
        status = (await callRoute(route, { path, headers, params })).status;
      } catch (error) {
        // The route client refuses an answer its route does not declare (a 500 among them).
        status = Number(/answered (\d+)/.exec(String(error))?.[1] ?? -1);
      }
      answers.push(`${what}: ${status}`);
    }
    expect(answers).toEqual(forged.map(({ what }) => `${what}: 400`));
  });
});
