import type { Db } from "../db";
import { AppError } from "../errors";
import { describeDecider } from "../shared/display/decided-by";
import type { PersonDecidedBy } from "../shared/api/request";
import { listRequests, type RequestFilters } from "./data";
import type { RequestView } from "./views";

export const EXPORT_FORMATS = ["csv", "jsonl"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Rows read per query: the export holds one page in memory, however many rows match. */
const EXPORT_PAGE_SIZE = 200;

export function parseExportFormat(format: string): ExportFormat {
  const known = EXPORT_FORMATS.find((candidate) => candidate === format);
  if (known) return known;
  throw new AppError(
    "UNSUPPORTED_EXPORT_FORMAT",
    `format: export as ${EXPORT_FORMATS.map((name) => `'${name}'`).join(" or ")}, not '${format.slice(0, 40)}'`,
  );
}

/**
 * The CSV's columns: the request, then its provenance flattened so a spreadsheet can filter on it
 * (`decided_by` is the line the console shows; the columns after it are its parts).
 */
export const EXPORT_COLUMNS = [
  "id",
  "created_at",
  "responded_at",
  "expires_at",
  "agent",
  "incarnation",
  "type",
  "sender",
  "target",
  "status",
  "responded_by",
  "decided_by",
  "decided_by_kind",
  "decided_by_user_ids",
  "decided_by_session_ids",
  "decided_by_token_ids",
  "decided_by_token_names",
  "decided_by_agent",
  "timeout_policy",
  "rule_id",
  "rule_pattern",
  "required_approvals",
  "approved_by",
  "feedback",
  "payload",
  "response",
] as const;
type ExportColumn = (typeof EXPORT_COLUMNS)[number];

function people(request: RequestView): PersonDecidedBy[] {
  const { decidedBy } = request;
  if (decidedBy?.kind === "human" || decidedBy?.kind === "token") return [decidedBy];
  return decidedBy?.kind === "leads" ? decidedBy.approvals : [];
}

/** One request as the CSV's cells, every one a string ("" for none). */
export function toExportCells(request: RequestView): Record<ExportColumn, string> {
  const { decidedBy } = request;
  const persons = people(request);
  const tokens = persons.flatMap((person) => (person.kind === "token" ? [person] : []));
  const join = (values: string[]) => values.join("; ");
  return {
    id: request.id,
    created_at: request.createdAt,
    responded_at: request.respondedAt ?? "",
    expires_at: request.expiresAt,
    agent: request.agent,
    incarnation: String(request.incarnation),
    type: request.type,
    sender: request.sender,
    target: request.target,
    status: request.status,
    responded_by: request.respondedBy ?? "",
    decided_by: decidedBy ? describeDecider(request) : "",
    decided_by_kind: decidedBy?.kind ?? "",
    decided_by_user_ids: join(persons.map((person) => person.userId)),
    decided_by_session_ids: join(
      persons.flatMap((person) => (person.kind === "human" ? [person.sessionId] : [])),
    ),
    decided_by_token_ids: join(tokens.map((token) => token.tokenId)),
    decided_by_token_names: join(tokens.map((token) => token.tokenName)),
    decided_by_agent: decidedBy?.kind === "agent" ? decidedBy.agent : "",
    timeout_policy: decidedBy?.kind === "timeout" ? decidedBy.policy : "",
    rule_id: decidedBy?.kind === "rule" ? decidedBy.ruleId : "",
    rule_pattern: decidedBy?.kind === "rule" ? decidedBy.pattern : "",
    required_approvals: String(request.requiredApprovals),
    approved_by: join(request.approvals.map((approval) => approval.email)),
    feedback: request.feedback ?? "",
    payload: JSON.stringify(request.payload),
    response: request.response === null ? "" : JSON.stringify(request.response),
  };
}

/**
 * A spreadsheet runs a cell that starts with = + - @ (or a tab or carriage return, which some
 * strip first) as a formula, and agents write much of what is exported: such a cell is prefixed
 * with ' so it reads as text. Then RFC 4180 quoting, on every cell so no content can end one early.
 */
export function encodeCsvCell(value: string): string {
  const inert = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${inert.replaceAll('"', '""')}"`;
}

export function encodeCsvRow(cells: readonly string[]): string {
  return `${cells.map(encodeCsvCell).join(",")}\r\n`;
}

function encodeRequest(format: ExportFormat, request: RequestView): string {
  switch (format) {
    case "csv": {
      const cells = toExportCells(request);
      return encodeCsvRow(EXPORT_COLUMNS.map((column) => cells[column]));
    }
    case "jsonl":
      return `${JSON.stringify(request)}\n`;
    default: {
      const unreachable: never = format;
      return unreachable;
    }
  }
}

/**
 * Every request matching the history's filters, newest first, as a stream: each pull reads the
 * next page by cursor, so memory stays one page whatever the size of the history, and a client
 * that goes away stops the reading.
 */
export function streamRequestsExport(
  db: Db,
  filters: Omit<RequestFilters, "cursor" | "limit" | "order">,
  format: ExportFormat,
  pageSize = EXPORT_PAGE_SIZE,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let cursor: string | undefined;
  let isHeaderSent = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!isHeaderSent && format === "csv") {
        isHeaderSent = true;
        controller.enqueue(encoder.encode(encodeCsvRow(EXPORT_COLUMNS)));
      }
      const page = await listRequests(db, {
        ...filters,
        order: "newest",
        limit: pageSize,
        cursor,
      });
      const text = page.items.map((request) => encodeRequest(format, request)).join("");
      if (text) controller.enqueue(encoder.encode(text));
      if (page.nextCursor === null) controller.close();
      else cursor = page.nextCursor;
    },
  });
}

const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: "text/csv; charset=utf-8",
  jsonl: "application/jsonl; charset=utf-8",
};

/** A download, never a page: named by the time it was taken. */
export function exportHeaders(format: ExportFormat, at: Date): Record<string, string> {
  const stamp = at
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-");
  return {
    "content-type": CONTENT_TYPES[format],
    "content-disposition": `attachment; filename="handshake-requests-${stamp}.${format}"`,
    "cache-control": "no-store",
  };
}
