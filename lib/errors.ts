import { type z } from "zod";

// The closed list of error codes and the one table that maps them to HTTP status.
export const errorStatus = {
  INVALID_INPUT: 400,
  INVALID_JSON: 400,
  UNAUTHENTICATED: 401,
  INVALID_CREDENTIALS: 401,
  FORBIDDEN: 403,
  CROSS_SITE_REQUEST: 403,
  NOT_TARGET: 403,
  /** An API token whose scope does not allow the route; the message names the scopes that do. */
  INSUFFICIENT_SCOPE: 403,
  /** A token scope the owner's role does not allow (at creation, or after a downgrade). */
  SCOPE_ABOVE_ROLE: 403,
  /** A `connect` token touching an agent it did not register. */
  NOT_AGENT_OWNER: 403,
  NOT_ALLOWED_TO_SEND: 403,
  PLAN_GATE_BLOCKED: 403,
  PATH_OUTSIDE_WORKSPACE: 403,
  /** A heartbeat claiming a tool host the agent has not: a sandbox outside the supervisor's. */
  TOOL_HOST_NOT_ALLOWED: 403,
  USER_DISABLED: 403,
  /** Two-person rule: a Lead account created after the request may not approve it. */
  LEAD_ACCOUNT_TOO_NEW: 403,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  USER_NOT_FOUND: 404,
  AGENT_NOT_FOUND: 404,
  REQUEST_NOT_FOUND: 404,
  TASK_NOT_FOUND: 404,
  TOKEN_NOT_FOUND: 404,
  RULE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  /** A request that did not arrive within the server's time for it, refused before any route. */
  REQUEST_TIMEOUT: 408,
  USER_EXISTS: 409,
  AGENT_EXISTS: 409,
  AGENT_NOT_ACTIVE: 409,
  /** Worker tokens are for agents the supervisor runs; others keep the token they registered with. */
  AGENT_HAS_NO_WORKER: 409,
  ALREADY_DECIDED: 409,
  STALE_INCARNATION: 409,
  STALE_WORK_VERSION: 409,
  REQUEST_PENDING: 409,
  TASK_NOT_AVAILABLE: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  REQUEST_EXPIRED: 409,
  AGENT_STOPPING: 409,
  LAST_ACTIVE_LEAD: 409,
  /** Two-person rule: this Lead (by any session or token) already approved; another must. */
  SECOND_LEAD_REQUIRED: 409,
  PAYLOAD_TOO_LARGE: 413,
  /** Headers past Node's limit (16 KiB unless configured), refused before any route. */
  HEADERS_TOO_LARGE: 431,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TYPE_MISMATCH: 422,
  UNKNOWN_TYPE: 422,
  FEEDBACK_REQUIRED: 422,
  /** A decision with a field its type does not take, or an answer the request cannot have. */
  INVALID_RESPONSE: 422,
  /** A rule whose pattern does not parse, or a field that cannot go with its effect. */
  INVALID_RULE: 422,
  /** Two-person rule: both Leads approve the request as asked, so neither may edit it. */
  EDITS_NEED_ONE_LEAD: 422,
  /** An export asked for a format other than `csv` or `jsonl`. */
  UNSUPPORTED_EXPORT_FORMAT: 422,
  /** A bulk decision whose ids are none, more than 100, or repeated. */
  INVALID_BATCH: 422,
  /** A request a bulk decision cannot take (a question needs its own answer). */
  NOT_BULK_DECIDABLE: 422,
  /** An extension that would keep a request open longer than MAX_REQUEST_LIFETIME_SECONDS. */
  DEADLINE_TOO_FAR: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  DATABASE_UNAVAILABLE: 503,
  /** PostgreSQL rolled the change back against a concurrent one (a deadlock): nothing changed. */
  TRANSACTION_CONFLICT: 503,
  /** PostgreSQL canceled a statement of the call, and the transaction it ran in. */
  STATEMENT_CANCELED: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof errorStatus;

export type ErrorBody = {
  error: { code: ErrorCode; message: string } & Record<string, unknown>;
};

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Extra fields merged into the JSON error object, e.g. the stored request for ALREADY_DECIDED. */
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.details = options.details ?? {};
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return errorStatus[this.code];
  }

  toBody(): ErrorBody {
    return { error: { ...this.details, code: this.code, message: this.message } };
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** A schema's refusal; `root` names what was parsed (`body`, `query`, `payload`) in the message. */
export function invalidInput(error: z.ZodError, root?: string): AppError {
  const issues = error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
  const first = issues[0];
  const where = [root, first?.path].filter(Boolean).join(".");
  const summary = !first ? "invalid input" : where ? `${where}: ${first.message}` : first.message;
  return new AppError("INVALID_INPUT", summary, { details: { issues } });
}

/** PostgreSQL rolled a transaction back against a concurrent one: it changed nothing, ask again. */
export function transactionConflict(): AppError {
  return new AppError(
    "TRANSACTION_CONFLICT",
    "the database rolled this change back against a concurrent one; nothing changed: retry",
    { headers: { "retry-after": "1" } },
  );
}

/**
 * PostgreSQL canceled a statement of the call (an operator, a timeout), and the transaction it
 * ran in with it. A transaction the call committed before it stands: a retry is answered as
 * what is stored then (a decision already made, a request already expired).
 */
export function statementCanceled(): AppError {
  return new AppError(
    "STATEMENT_CANCELED",
    "the database canceled a statement of this call before it finished: retry",
    { headers: { "retry-after": "1" } },
  );
}
