import type { RequestView } from "../../lib/requests/views";

/** A pending plan to the Lead as an agent or the console receives it; override what a test needs. */
export function makeRequestView(overrides: Partial<RequestView> = {}): RequestView {
  return {
    id: "req-1",
    type: "plan_approval",
    status: "pending",
    sender: "alice",
    target: "lead",
    agent: "alice",
    payload: {},
    feedback: null,
    respondedBy: null,
    decidedBy: null,
    response: null,
    requiredApprovals: 1,
    approvals: [],
    respondedAt: null,
    createdAt: "2025-01-01T00:00:00.000Z",
    expiresAt: "2025-01-01T00:15:00.000Z",
    incarnation: 1,
    workVersion: 1,
    taskId: null,
    timeoutPolicy: "auto-rejects",
    responseType: "plan_approval_response",
    askedAgainAfter: null,
    ...overrides,
  };
}
