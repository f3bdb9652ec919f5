import { afterAll, describe, expect, it } from "vitest";
import { agentStatusSchema, WAITING_STATUSES } from "../../lib/shared/agents/schema";
import { getDb } from "../../lib/db";
import { REQUEST_OUTCOMES } from "../../lib/protocol/definition";
import { findProtocolType, PROTOCOL_TYPES } from "../../lib/protocol/registry";
import { REQUEST_STATUSES } from "../../lib/shared/requests/schema";

const db = getDb();
afterAll(() => db.$disconnect());

async function enumValues(name: string): Promise<string[]> {
  const rows = await db.$queryRaw<{ value: string }[]>`
    SELECT e.enumlabel AS value FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid
    WHERE t.typname = ${name} ORDER BY e.enumsortorder`;
  return rows.map((row) => row.value);
}

async function definitionOf(name: string, table: string): Promise<string> {
  const rows = await db.$queryRaw<{ definition: string }[]>`
    SELECT pg_get_constraintdef(c.oid) AS definition FROM pg_constraint c
    JOIN pg_class r ON r.oid = c.conrelid WHERE c.conname = ${name} AND r.relname = ${table}`;
  return rows[0]?.definition ?? "";
}

const definitions = PROTOCOL_TYPES.map((type) => findProtocolType(type)!);

describe("the protocol registry against the database's closed lists", () => {
  it("every outcome a type declares is a request status the database and the API know", async () => {
    const statuses = await enumValues("request_status");
    expect([...REQUEST_STATUSES].sort()).toEqual([...statuses].sort());
    for (const definition of definitions) {
      expect(definition.outcomes.length).toBeGreaterThan(0);
      for (const outcome of definition.outcomes) expect(statuses).toContain(outcome);
      expect(definition.outcomes).toContain(definition.decisionOutcome(true));
      expect(definition.outcomes).toContain(definition.decisionOutcome(false));
    }
  });

  it("every waiting status a type declares is an agent status the database knows, and counts as waiting", async () => {
    const statuses = await enumValues("agent_status");
    expect([...agentStatusSchema.options].sort()).toEqual([...statuses].sort());
    for (const definition of definitions) {
      for (const direction of definition.directions) {
        const waiting = definition.waitingStatus(direction);
        if (waiting === null) continue;
        expect(statuses).toContain(waiting);
        // Only agent → Lead requests make the agent wait on someone else.
        expect(direction).toBe("agent_to_lead");
        expect(WAITING_STATUSES).toContain(waiting);
      }
    }
  });

  it("every decision outcome is one the decided-by constraint requires a decider for", async () => {
    const check = await definitionOf("requests_decision_has_decided_by", "requests");
    for (const outcome of REQUEST_OUTCOMES) expect(check).toContain(`'${outcome}'`);
    for (const definition of definitions) {
      for (const outcome of definition.outcomes) expect(REQUEST_OUTCOMES).toContain(outcome);
    }
  });

  it("each response type is the type's own, and no two types share one", () => {
    const responseTypes = definitions.map((definition) => definition.responseType);
    expect(new Set(responseTypes).size).toBe(responseTypes.length);
    for (const definition of definitions) {
      // Types without response fields take an empty strict object: anything extra is refused.
      expect(definition.responseSchema.safeParse({ surprise: 1 }).success).toBe(false);
    }
  });
});
