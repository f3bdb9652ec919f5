import { z } from "zod";
import type { Db } from "../db";
import type { Prisma } from "../generated/prisma/client";
import { decodeCursor, encodeCursor } from "../http/cursor";
import { queryIntegerOr } from "../http/query";
import { toMessageView, type MessageView } from "../messages/views";
import { findApprovals } from "../requests/approvals";
import { toRequestView, type RequestView } from "../requests/views";
import { findAgentByName } from "./data";
import { instantSchema } from "../shared/api/instant";
import { REQUEST_ID_PATTERN } from "../shared/requests/schema";
import {
  agentStatusSchema,
  gateStateSchema,
  type AgentStatus,
  type GateState,
} from "../shared/agents/schema";

/**
 * Everything that happened to one agent, newest first, from four tables. Items at the same
 * millisecond (one transaction writes several) are ordered by source rank, then id, so every item
 * has a unique position and a page boundary can fall anywhere without losing or repeating one.
 */
const SOURCE_RANK = {
  request_created: 0,
  tool_call: 1,
  request_decided: 2,
  status: 3,
  message: 4,
} as const;
type Source = keyof typeof SOURCE_RANK;

/** The sources whose rows have bigint ids, read as numbers in views; the others are requests. */
const NUMBERED_RANKS: ReadonlySet<number> = new Set([
  SOURCE_RANK.tool_call,
  SOURCE_RANK.status,
  SOURCE_RANK.message,
]);

function isIdOfRank(id: string, rank: number): boolean {
  if (!NUMBERED_RANKS.has(rank)) return REQUEST_ID_PATTERN.test(id);
  return /^[0-9]{1,16}$/.test(id) && Number(id) <= Number.MAX_SAFE_INTEGER;
}

// Every field is checked for the query it goes into: an id its source's ids cannot be, or a
// time PostgreSQL cannot hold, is a forged cursor (400), never a failed query.
const timelineCursorSchema = z
  .strictObject({
    at: instantSchema(),
    rank: z.number().int().min(0).max(4),
    id: z.string().max(64),
  })
  .refine(({ id, rank }) => isIdOfRank(id, rank), "an id its item's source cannot have");
type TimelineCursor = { at: Date; rank: number; id: string };

export const timelineQuerySchema = z.strictObject({
  /** The `nextCursor` of the previous page. */
  before: z
    .string()
    .max(300)
    .transform((raw, context): TimelineCursor => {
      const cursor = decodeCursor(raw, timelineCursorSchema);
      if (!cursor) {
        context.addIssue({ code: "custom", message: "not a cursor this API returned" });
        return z.NEVER;
      }
      return { ...cursor, at: new Date(cursor.at) };
    })
    .optional(),
  limit: queryIntegerOr(50, { min: 1, max: 200 }),
});
export type TimelineQuery = z.infer<typeof timelineQuerySchema>;

export type ToolCallView = {
  id: number;
  tool: string;
  args: Record<string, unknown>;
  gate: GateState;
  isAllowed: boolean;
  code: string | null;
  reason: string | null;
  requestId: string | null;
  incarnation: number;
};

export type StatusChange = {
  event: "registered" | "respawned" | "updated" | "stopped";
  incarnation: number | null;
  status: AgentStatus | null;
  gate: GateState | null;
  reason: string | null;
  isForced: boolean;
};

type ItemBase = { key: string; at: string };
export type TimelineItem =
  | (ItemBase & { kind: "message"; message: MessageView })
  | (ItemBase & { kind: "tool_call"; toolCall: ToolCallView })
  | (ItemBase & { kind: "request"; action: "created" | "decided"; request: RequestView })
  | (ItemBase & { kind: "status"; change: StatusChange });

export type TimelinePage = { items: TimelineItem[]; nextCursor: string | null };

// Event payloads are JSON written by lib/agents; read them defensively, field by field.
const agentEventDataSchema = z
  .object({
    incarnation: z.number().int().optional().catch(undefined),
    status: agentStatusSchema.optional().catch(undefined),
    gate: gateStateSchema.optional().catch(undefined),
    reason: z.string().optional().catch(undefined),
    isForced: z.boolean().optional().catch(undefined),
  })
  .catch({});

const STATUS_EVENTS: Record<string, StatusChange["event"]> = {
  "agent.registered": "registered",
  "agent.respawned": "respawned",
  "agent.updated": "updated",
  "agent.stopped": "stopped",
};

type Entry = { at: Date; rank: number; id: string; item: TimelineItem };

/** Rows strictly after the cursor in (at desc, rank desc, id desc) order, for one source. */
function olderThan(
  field: string,
  source: Source,
  cursor: TimelineCursor | undefined,
  toId: (id: string) => unknown,
): Record<string, unknown> {
  if (!cursor) return {};
  const rank = SOURCE_RANK[source];
  if (rank < cursor.rank) return { [field]: { lte: cursor.at } };
  if (rank > cursor.rank) return { [field]: { lt: cursor.at } };
  return {
    OR: [{ [field]: { lt: cursor.at } }, { [field]: cursor.at, id: { lt: toId(cursor.id) } }],
  };
}

/** Ids are decimal bigints or fixed-length request ids: longer is larger, then lexical order. */
function compareIds(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareNewestFirst(a: Entry, b: Entry): number {
  return b.at.getTime() - a.at.getTime() || b.rank - a.rank || compareIds(b.id, a.id);
}

/** A timeline item before its `at`, which `entry` fills from the row's own time. */
type UndatedItem<Item = TimelineItem> = Item extends unknown ? Omit<Item, "at"> : never;

function entry(source: Source, at: Date, id: string, item: UndatedItem): Entry {
  return { at, rank: SOURCE_RANK[source], id, item: { ...item, at: at.toISOString() } };
}

const toBigInt = (id: string) => BigInt(id);
const asIs = (id: string) => id;

/**
 * One page of an agent's timeline: messages it sent or received, its tool calls (allowed and
 * blocked), its requests (created, and decided) and its status changes. Each source is read
 * newest first up to the page size and the results merged, so a page costs five bounded queries.
 */
export async function listAgentTimeline(
  db: Db,
  name: string,
  query: TimelineQuery,
): Promise<TimelinePage> {
  const agent = await findAgentByName(db, name);
  const { before, limit } = query;
  const take = limit + 1;
  const newestFirst = [{ createdAt: "desc" as const }, { id: "desc" as const }];

  const [created, decided, toolCalls, events, messages] = await Promise.all([
    db.request.findMany({
      where: {
        agentId: agent.id,
        ...olderThan("createdAt", "request_created", before, asIs),
      } as Prisma.RequestWhereInput,
      orderBy: newestFirst,
      take,
    }),
    db.request.findMany({
      where: {
        AND: [
          { agentId: agent.id, respondedAt: { not: null } },
          olderThan("respondedAt", "request_decided", before, asIs),
        ],
      } as Prisma.RequestWhereInput,
      orderBy: [{ respondedAt: "desc" }, { id: "desc" }],
      take,
    }),
    db.toolCall.findMany({
      where: {
        agentId: agent.id,
        ...olderThan("createdAt", "tool_call", before, toBigInt),
      } as Prisma.ToolCallWhereInput,
      orderBy: newestFirst,
      take,
    }),
    db.event.findMany({
      where: {
        subject: `agent:${agent.name}`,
        kind: { in: Object.keys(STATUS_EVENTS) },
        ...olderThan("createdAt", "status", before, toBigInt),
      } as Prisma.EventWhereInput,
      orderBy: newestFirst,
      take,
    }),
    db.message.findMany({
      where: {
        AND: [
          { OR: [{ recipient: agent.name }, { sender: agent.name }] },
          olderThan("createdAt", "message", before, toBigInt),
        ],
      } as Prisma.MessageWhereInput,
      orderBy: newestFirst,
      take,
    }),
  ]);

  const approvals = await findApprovals(db, [...created, ...decided]);
  const entries: Entry[] = [
    ...created.map((request) =>
      entry("request_created", request.createdAt, request.id, {
        key: `request:${request.id}:created`,
        kind: "request",
        action: "created",
        request: toRequestView(request, approvals.get(request.id)),
      }),
    ),
    ...decided.flatMap((request) =>
      request.respondedAt
        ? [
            entry("request_decided", request.respondedAt, request.id, {
              key: `request:${request.id}:decided`,
              kind: "request",
              action: "decided",
              request: toRequestView(request, approvals.get(request.id)),
            }),
          ]
        : [],
    ),
    ...toolCalls.map((call) =>
      entry("tool_call", call.createdAt, String(call.id), {
        key: `tool_call:${call.id}`,
        kind: "tool_call",
        toolCall: {
          id: Number(call.id),
          tool: call.tool,
          args: call.args as Record<string, unknown>,
          gate: gateStateSchema.parse(call.gate),
          isAllowed: call.isAllowed,
          code: call.code,
          reason: call.reason,
          requestId: call.requestId,
          incarnation: call.incarnation,
        },
      }),
    ),
    ...events.map((event) => {
      const data = agentEventDataSchema.parse(event.data);
      return entry("status", event.createdAt, String(event.id), {
        key: `status:${event.id}`,
        kind: "status",
        change: {
          event: STATUS_EVENTS[event.kind] ?? "updated",
          incarnation: data.incarnation ?? null,
          status: data.status ?? null,
          gate: data.gate ?? null,
          reason: data.reason ?? null,
          isForced: data.isForced ?? false,
        },
      });
    }),
    ...messages.map((message) =>
      entry("message", message.createdAt, String(message.id), {
        key: `message:${message.id}`,
        kind: "message",
        message: toMessageView(message),
      }),
    ),
  ].sort(compareNewestFirst);

  const page = entries.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map(({ item }) => item),
    nextCursor:
      entries.length > limit && last
        ? encodeCursor({ at: last.at.toISOString(), rank: last.rank, id: last.id })
        : null,
  };
}
