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
    previousId: 30,
    ...overrides,
  };
}

/** The `message.sent` of message 41. */
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
  it("is the message with the event's id and time, as a read returns it, for every long-poll it wakes", async () => {
    expectDecisionMessage("req_a", Promise.resolve(written()));
    // A read's order: toMessageView's fields, and jsonb's for the metadata's keys.
    const asRead =
      '{"id":41,"from":"lead","to":"ada","type":"plan_approval_response","content":"",' +
      '"metadata":{"status":"approved","approve":true,"requestId":"req_a"},"incarnation":2,' +
      '"cancelledAt":null,"createdAt":"2026-12-01T06:00:00.123Z"}';
    expect(JSON.stringify(await messageWokenBy(sent("req_a"), actor, 30n))).toBe(asRead);
    expect(JSON.stringify(await messageWokenBy(sent("req_a"), actor, 40n))).toBe(asRead);
  });

  it("is none when a live message lies between the cursor and it, or it is at or below the cursor", async () => {
    expectDecisionMessage("req_between", Promise.resolve(written({ previousId: 30 })));
    expectDecisionMessage("req_first", Promise.resolve(written({ previousId: null })));
    expect(await messageWokenBy(sent("req_between"), actor, 29n)).toBeUndefined();
    expect(await messageWokenBy(sent("req_between"), actor, 0n)).toBeUndefined();
    expect(await messageWokenBy(sent("req_first"), actor, 0n)).toMatchObject({ id: 41 });
    expect(await messageWokenBy(sent("req_first"), actor, 41n)).toBeUndefined();
  });

  it("is none for another agent, another incarnation, another kind, or a request not decided here", async () => {
    expectDecisionMessage("req_b", Promise.resolve(written({ incarnation: 1 })));
    expectDecisionMessage("req_c", Promise.resolve(written({ agentId: "a-other" })));
    expectDecisionMessage("req_d", Promise.resolve(written()));
    expectDecisionMessage("req_e", Promise.resolve(undefined));
    expect(await messageWokenBy(sent("req_b"), actor, 30n)).toBeUndefined();
    expect(await messageWokenBy(sent("req_c"), actor, 30n)).toBeUndefined();
    expect(await messageWokenBy(sent("req_d", "request.decided"), actor, 30n)).toBeUndefined();
    expect(await messageWokenBy(sent("req_e"), actor, 30n)).toBeUndefined();
    expect(await messageWokenBy(sent("req_never"), actor, 30n)).toBeUndefined();
  });

  it("waits for a statement whose event came first", async () => {
    let answer: (message: DecisionMessage) => void = () => undefined;
    expectDecisionMessage("req_f", new Promise((resolve) => (answer = resolve)));
    const woken = messageWokenBy(sent("req_f"), actor, 30n);
    answer(written());
    expect(await woken).toMatchObject({ id: 41 });
  });
});
