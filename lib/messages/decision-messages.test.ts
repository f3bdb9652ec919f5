import { describe, expect, it } from "vitest";
import type { AgentActor } from "../auth/actor";
import type { ConsoleEvent } from "../shared/realtime/contract";
import { expectDecisionMessage, messageWokenBy, type DecisionMessage } from "./decision-messages";

const actor: AgentActor = { kind: "agent", agentId: "a-1", name: "ada", incarnation: 2 };

function written(overrides: Partial<DecisionMessage> = {}): DecisionMessage {
  return {
    from: "lead",
    to: "ada",
    agentId: "a-1",
    incarnation: 2,
    type: "plan_approval_response",
    content: "",
    metadata: { requestId: "req_a", approve: true, status: "approved" },
    cancelledAt: null,
    ...overrides,
  };
}

function sent(requestId: string, kind: ConsoleEvent["kind"] = "message.sent"): ConsoleEvent {
  return {
    id: 90,
    kind,
    subject: "inbox:ada",
    at: "2026-12-01T06:00:00.123Z",
    data: { messageId: 41, from: "lead", to: "ada", type: "plan_approval_response", requestId },
  } as ConsoleEvent;
}

describe("a decision's message, kept for the long-poll it wakes (decision 040)", () => {
  it("is the message with the event's id and time, for every long-poll it wakes", async () => {
    expectDecisionMessage("req_a", Promise.resolve(written()));
    const expected = {
      from: "lead",
      to: "ada",
      incarnation: 2,
      type: "plan_approval_response",
      content: "",
      metadata: { requestId: "req_a", approve: true, status: "approved" },
      cancelledAt: null,
      id: 41,
      createdAt: "2026-12-01T06:00:00.123Z",
    };
    expect(await messageWokenBy(sent("req_a"), actor)).toEqual(expected);
    expect(await messageWokenBy(sent("req_a"), actor)).toEqual(expected);
  });

  it("is none for another agent, another incarnation, another kind, or a request not decided here", async () => {
    expectDecisionMessage("req_b", Promise.resolve(written({ incarnation: 1 })));
    expectDecisionMessage("req_c", Promise.resolve(written({ agentId: "a-other" })));
    expectDecisionMessage("req_d", Promise.resolve(written()));
    expectDecisionMessage("req_e", Promise.resolve(undefined));
    expect(await messageWokenBy(sent("req_b"), actor)).toBeUndefined();
    expect(await messageWokenBy(sent("req_c"), actor)).toBeUndefined();
    expect(await messageWokenBy(sent("req_d", "request.decided"), actor)).toBeUndefined();
    expect(await messageWokenBy(sent("req_e"), actor)).toBeUndefined();
    expect(await messageWokenBy(sent("req_never"), actor)).toBeUndefined();
  });

  it("waits for a statement whose event came first", async () => {
    let answer: (message: DecisionMessage) => void = () => undefined;
    expectDecisionMessage("req_f", new Promise((resolve) => (answer = resolve)));
    const woken = messageWokenBy(sent("req_f"), actor);
    answer(written());
    expect(await woken).toMatchObject({ id: 41 });
  });
});
