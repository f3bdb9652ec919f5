import { afterAll, describe, expect, it } from "vitest";
import { isAllowedVerdict, measureLoad, RULE_ALLOWED_TOOL_CALL, ruleForBench } from "../bench/gate";
import { rules as rulesRoute } from "../lib/api/v1/rules";
import { getDb } from "../lib/db";
import { api, createToken, uniqueName } from "./api/fixtures";
import { callRoute } from "./route-client";

afterAll(() => getDb().$disconnect());

const answer = (body: unknown) => new Response(JSON.stringify(body));

describe("the bench's gate sides (bench/gate.ts)", () => {
  it("counts an answer that is not the measured path as an error, not as a sample", async () => {
    let calls = 0;
    const load = await measureLoad({
      clients: 1,
      durationMs: 50,
      // Every other verdict is a card: the path a rule-allowed side must not be measuring.
      call: async () => answer(calls++ % 2 === 0 ? { allowed: true } : { allowed: false }),
      isAnswerRight: isAllowedVerdict,
    });
    expect(load.errors).toBeGreaterThan(0);
    expect(Math.abs(load.latenciesMs.length - load.errors)).toBeLessThanOrEqual(1);
  });

  it("allows the rule-allowed call for agents the bench's token registered", async () => {
    // The run at 67c6f84 scoped its rule to a role, which names no token-registered agent since
    // decision 077: every "rule-allowed" call raised a card, and the side measured that instead.
    const benchToken = await createToken("admin");
    const name = uniqueName("bench-gate");
    const registered = await api.registerAgent(benchToken.headers, { name, role: "bench" });
    expect(registered.status).toBe(201);
    const rule = await callRoute(rulesRoute.POST, {
      path: "/api/v1/rules",
      headers: benchToken.headers,
      body: ruleForBench(benchToken.id),
    });
    expect(rule.status).toBe(201);

    const verdict = await api.toolCall(
      { authorization: `Bearer ${String(registered.json.token)}` },
      RULE_ALLOWED_TOOL_CALL,
    );

    expect(verdict.json).toMatchObject({ allowed: true, ruleId: rule.json?.id });
    expect(isAllowedVerdict(new TextEncoder().encode(JSON.stringify(verdict.json)).buffer)).toBe(
      true,
    );
  });
});
