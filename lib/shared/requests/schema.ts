export const REQUEST_STATUSES = [
  "pending",
  "approved",
  "rejected",
  "expired",
  "superseded",
  "cancelled",
] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];
