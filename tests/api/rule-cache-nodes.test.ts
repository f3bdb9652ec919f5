import { describe, expect, it } from "vitest";
import { sleep } from "../support/reliability";
import { callNode, runTwoNodesDuringFile } from "../support/two-nodes-hooks";

// Two web nodes (separate processes, separate rule caches) on one database. A rule made through
// one node must be obeyed by the other's next verdicts within a second (decision 028), even though
// the other node answered the same call from its cache and its one-statement path just before.

const RULE_BOUND_MS = 1_000;
const READ = { tool: "read_file", args: { path: "notes.txt" } };

const nodes = runTwoNodesDuringFile("handshake_rule_cache");

describe("the rule cache across nodes", () => {
  it("a deny rule made on one node is obeyed by the other within a second", async () => {
    const registered = await callNode(nodes.a, "POST", "/api/v1/agents", nodes.leadToken, {
      name: "rule-nodes",
      role: "tester",
    });
    expect(registered.status).toBe(201);
    const agentToken = String(registered.json.token);
    for (let round = 0; round < 3; round += 1) {
      expect(
        (await callNode(nodes.b, "POST", "/api/v1/tool-calls", agentToken, READ)).json,
      ).toMatchObject({
        allowed: true,
      });
    }
    const rule = await callNode(nodes.a, "POST", "/api/v1/rules", nodes.leadToken, {
      pattern: "read_file",
      effect: "deny",
      scope: { kind: "agent", agent: "rule-nodes" },
    });
    expect(rule.status).toBe(201);
    const started = Date.now();
    let deniedAfterMs = Infinity;
    while (Date.now() - started < 5_000) {
      const sentAt = Date.now();
      const { json } = await callNode(nodes.b, "POST", "/api/v1/tool-calls", agentToken, READ);
      if (json.code === "RULE_DENIED") {
        deniedAfterMs = sentAt - started;
        break;
      }
      await sleep(10);
    }
    expect(deniedAfterMs).toBeLessThan(RULE_BOUND_MS);
    // Every allowed answer was recorded, and so was the denial.
    expect(
      await nodes.db.toolCall.count({
        where: { agent: { name: "rule-nodes" }, code: "RULE_DENIED" },
      }),
    ).toBe(1);
  });
});
