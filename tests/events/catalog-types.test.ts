import { describe, expect, it } from "vitest";
import { STALE_KEYS } from "../../components/realtime/query-keys";
import {
  EVENT_PAYLOAD_SCHEMAS,
  parseEventData,
  type ConsoleEvent,
  type EventKind,
  type EventPayload,
} from "../../lib/shared/events/catalog";
import type { appendEvent } from "../../lib/events/mutations";

/*
 * The compile-time half of this file is checked by `npm run typecheck` (tsc covers tests/): each
 * `@ts-expect-error` fails the typecheck if the error it expects ever stops happening.
 */

// A kind added to the catalog without a stale-keys entry does not compile.
type WithANewKind = EventKind | "widget.created";
// @ts-expect-error "widget.created" has no entry
export const staleKeysForANewKind: Record<WithANewKind, unknown> = STALE_KEYS;

// appendEvent refuses a kind the catalog does not have, and a payload that is not that kind's.
type Append = typeof appendEvent;
export const appendAnUnknownKind = (append: Append) =>
  // @ts-expect-error not a kind in the catalog
  append(null as never, "widget.created", "widget:1", {});
export const appendAWrongPayload = (append: Append) =>
  // @ts-expect-error task.created carries taskId and title
  append(null as never, "task.created", "task:1", { taskId: "t1" });

// ConsoleEvent is discriminated by kind: narrowing on kind types the payload.
export function taskTitle(event: ConsoleEvent): string | null {
  if (event.kind !== "task.created") return null;
  const data: EventPayload<"task.created"> = event.data;
  // @ts-expect-error a task.created event carries no agent
  void event.data.agent;
  return data.title;
}

describe("the event catalog", () => {
  it("gives every kind a stale-keys entry at run time too", () => {
    expect(Object.keys(STALE_KEYS).sort()).toEqual(Object.keys(EVENT_PAYLOAD_SCHEMAS).sort());
  });

  it("refuses a payload that is not the kind's", () => {
    expect(parseEventData("agent.stopped", { agent: "ada", incarnation: "1" })).toBeNull();
    expect(
      parseEventData("task.updated", { taskId: "t1", status: "claimed", agent: "ada" }),
    ).toEqual({ taskId: "t1", status: "claimed", agent: "ada" });
  });
});
