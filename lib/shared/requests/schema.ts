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
