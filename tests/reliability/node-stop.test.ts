import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { registerAgent } from "../api/fixtures";
import { startApiNode, type ApiNode } from "../support/api-node";

const databaseUrl = () => process.env.DATABASE_URL as string;

const nodes: ApiNode[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((node) => node.crash()));
});

async function startNode(): Promise<ApiNode> {
  const node = await startApiNode({ databaseUrl: databaseUrl(), label: "stop" });
  nodes.push(node);
  return node;
}

/** SIGTERM, then how the node ended and how long after, or null if it still runs at `withinMs`. */
async function terminate(
  node: ApiNode,
  withinMs: number,
): Promise<{ code: number | null; afterMs: number } | null> {
  const sentAt = Date.now();
  process.kill(node.pid, "SIGTERM");
  const ended = await Promise.race([
    node.exited,
    new Promise<null>((resolve) => setTimeout(() => resolve(null), withinMs)),
  ]);
  return ended && { code: ended.code, afterMs: Date.now() - sentAt };
}

describe("a web node's stop", () => {
  it("ends at once when nothing holds it", async () => {
    const node = await startNode();
    const ended = await terminate(node, 5_000);
    expect(ended?.code).toBe(0);
  });

  it("ends after its grace period when a statement waits on a lock another session holds", async () => {
    const node = await startNode();
    const agent = await registerAgent();
    // An operator's session, or a stuck job's, holding the agent's row: a submission waits on it.
    const holder = new pg.Client({ connectionString: databaseUrl() });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM agents WHERE name = $1 FOR UPDATE", [agent.name]);
      const submission = fetch(`${node.url}/api/v1/requests`, {
        method: "POST",
        headers: { ...agent.headers, "content-type": "application/json" },
        body: JSON.stringify({ type: "plan_approval", payload: { plan: "1. wait" } }),
      }).then(
        (response) => response.status,
        () => "cut off",
      );
      // Long enough for the node to have sent the statement that now waits.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      // Without the grace period it waits as long as the lock is held: forever, here.
      const ended = await terminate(node, 20_000);
      expect(ended?.code).toBe(1);
      expect(ended?.afterMs).toBeGreaterThanOrEqual(9_000);
      expect(node.output()).toContain("SIGTERM: not stopped after 10 s");
      expect(await submission).toBe("cut off");
    } finally {
      await holder.query("ROLLBACK");
      await holder.end();
    }
  }, 40_000);
});
