import { describe, expect, it } from "vitest";
import type { DecidedBy } from "../api/request";
import { describeDecider, describeOutcome, type DecidedRequest } from "./decided-by";

const ada = { userId: "u-ada", email: "ada@example.com" };
const bob = { userId: "u-bob", email: "bob@example.com" };

function decided(decidedBy: DecidedBy | null, overrides: Partial<DecidedRequest> = {}) {
  return { status: "approved", respondedBy: "ada@example.com", decidedBy, ...overrides };
}

describe("describeDecider and describeOutcome: one line per kind of provenance", () => {
  it.each<[string, DecidedRequest, string, string]>([
    [
      "a signed-in human",
      decided({ kind: "human", userId: ada.userId, sessionId: "s1" }),
      "ada@example.com (session)",
      "approved by ada@example.com (session)",
    ],
    [
      "a human's token",
      decided({ kind: "token", userId: ada.userId, tokenId: "t1", tokenName: "ci-bot" }),
      "token 'ci-bot' of ada@example.com",
      "approved by token 'ci-bot' of ada@example.com",
    ],
    [
      // Red team, round ten: the name read as another Lead's decision.
      "a token whose name tries to close its quotes",
      decided({
        kind: "token",
        userId: ada.userId,
        tokenId: "t2",
        tokenName: "ci' of bob@example.com, countersigned by \\ada",
      }),
      "token 'ci\\' of bob@example.com, countersigned by \\\\ada' of ada@example.com",
      "approved by token 'ci\\' of bob@example.com, countersigned by \\\\ada' of ada@example.com",
    ],
    [
      "an agent answering the Lead",
      decided({ kind: "agent", agent: "alice", incarnation: 2 }, { respondedBy: "alice" }),
      "agent alice",
      "approved by agent alice",
    ],
    [
      "a timeout",
      decided({ kind: "timeout", policy: "force_stop" }, { status: "expired" }),
      "timeout (policy force stop)",
      "expired: policy force stop",
    ],
    [
      "a rule",
      decided({ kind: "rule", ruleId: "rule_1", pattern: "bash(git status*)" }),
      "rule bash(git status*)",
      "approved by rule bash(git status*)",
    ],
    [
      "a rule whose pattern holds a right-to-left override: escaped",
      decided({ kind: "rule", ruleId: "rule_2", pattern: "bash(rm *\u202Egnp.*)" }),
      "rule bash(rm *⟨U+202E⟩gnp.*)",
      "approved by rule bash(rm *⟨U+202E⟩gnp.*)",
    ],
    [
      "two Leads, named from the approvals",
      decided(
        {
          kind: "leads",
          approvals: [
            { kind: "human", userId: ada.userId, sessionId: "s1" },
            { kind: "token", userId: bob.userId, tokenId: "t2", tokenName: "pager" },
          ],
        },
        { respondedBy: "bob@example.com", approvals: [ada, bob] },
      ),
      "two Leads: ada@example.com (session) and token 'pager' of bob@example.com",
      "approved by two Leads: ada@example.com (session) and token 'pager' of bob@example.com",
    ],
    [
      "two Leads without their approvals at hand: their ids",
      decided({
        kind: "leads",
        approvals: [
          { kind: "human", userId: ada.userId, sessionId: "s1" },
          { kind: "human", userId: bob.userId, sessionId: "s2" },
        ],
      }),
      "two Leads: u-ada (session) and u-bob (session)",
      "approved by two Leads: u-ada (session) and u-bob (session)",
    ],
    [
      "a decision from before provenance was recorded",
      decided(null, { status: "rejected", respondedBy: "old@example.com" }),
      "old@example.com",
      "rejected by old@example.com",
    ],
    [
      "a cancellation",
      decided(null, { status: "cancelled", respondedBy: "system" }),
      "system (agent stopped)",
      "cancelled by system (agent stopped)",
    ],
    [
      "a superseded request",
      decided(null, { status: "superseded", respondedBy: "system" }),
      "system (newer request)",
      "superseded by system (newer request)",
    ],
    [
      "an old expiry",
      decided(null, { status: "expired", respondedBy: "system" }),
      "system (timed out)",
      "expired by system (timed out)",
    ],
    [
      "nothing at all",
      decided(null, { status: "pending", respondedBy: null }),
      "—",
      "pending by —",
    ],
  ])("%s", (_name, request, decider, outcome) => {
    expect(describeDecider(request)).toBe(decider);
    expect(describeOutcome(request)).toBe(outcome);
  });
});
