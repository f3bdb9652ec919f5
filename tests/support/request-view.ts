import type { RequestView } from "../../lib/requests/views";

/** A pending request to the Lead as the console receives it, for rendering tests. */
export function requestView(overrides: Partial<RequestView> = {}): RequestView {
  return {
    id: "req_1",
    type: "tool_approval",
    status: "pending",
    sender: "alice",
    target: "lead",
    agent: "alice",
    payload: {},
    feedback: null,
    respondedBy: null,
    decidedBy: null,
    respondedAt: null,
    createdAt: "2026-11-30T11:59:00Z",
    expiresAt: "2026-11-30T12:09:00Z",
    incarnation: 1,
    workVersion: 0,
    taskId: null,
    response: null,
    timeoutPolicy: "auto-denies",
    responseType: "tool_approval_response",
    requiredApprovals: 1,
    askedAgainAfter: null,
    approvals: [],
    ...overrides,
  };
}
