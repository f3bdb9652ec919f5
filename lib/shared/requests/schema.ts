export const REQUEST_STATUSES = [
  "pending",
  "approved",
  "rejected",
  "expired",
  "answered",
  "unanswered",
  "superseded",
  "cancelled",
] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

/** What happens when nobody answers in time; recorded in `decidedBy` of the timeout. */
export const TIMEOUT_POLICIES = [
  "reject",
  "approve",
  "deny",
  "force_stop",
  "answer_default",
  "unanswered",
] as const;
export type TimeoutPolicy = (typeof TIMEOUT_POLICIES)[number];

/** A request's id as `newRequestId` (lib/requests/request-id.ts) makes it. */
export const REQUEST_ID_PATTERN = /^req_[0-9a-f]{32}$/;
