import { afterAll, beforeAll, inject } from "vitest";
import type { PrismaClient } from "../../lib/generated/prisma/client";
import { createApiToken } from "../../lib/tokens/mutations";
import { startApiNode, type ApiNode } from "./api-node";
import { createHuman, createOwnDatabase, sessionHeaders, type BrowserSession } from "./reliability";

export type TwoNodes = {
  a: ApiNode;
  b: ApiNode;
  /** The database both nodes use, for what a test writes or reads behind their backs. */
  db: PrismaClient;
  databaseUrl: string;
  /** A Lead's admin token, good on either node. */
  leadToken: string;
};

/**
 * For a test file about what each web node caches: two nodes as separate processes (so separate
 * caches) on a database of the file's own, started before its first test and stopped after its
 * last. The returned object is filled in then, so read it inside tests, not at the top level.
 */
export function runTwoNodesDuringFile(
  databasePrefix: string,
  options: { clockSkewMs?: { a?: number; b?: number } } = {},
): TwoNodes {
  const nodes = {} as TwoNodes;
  let database: Awaited<ReturnType<typeof createOwnDatabase>> | undefined;
  beforeAll(async () => {
    database = await createOwnDatabase(inject("adminDatabaseUrl"), databasePrefix);
    const lead = await createHuman(database.db, "lead");
    const admin = await createApiToken(database.db, lead.userId, { name: "nodes", scope: "admin" });
    const [a, b] = await Promise.all([
      startApiNode({ databaseUrl: database.url, label: "A", clockSkewMs: options.clockSkewMs?.a }),
      startApiNode({ databaseUrl: database.url, label: "B", clockSkewMs: options.clockSkewMs?.b }),
    ]);
    Object.assign(nodes, {
      a,
      b,
      db: database.db,
      databaseUrl: database.url,
      leadToken: admin.token,
    } satisfies TwoNodes);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([nodes.a?.stop(), nodes.b?.stop()]);
    await database?.drop();
  });
  return nodes;
}

/** A bearer token, or a signed-in browser's session. */
export type Credential = string | BrowserSession;

/** One API call to one node, as its client would send it. */
export async function callNode(
  node: ApiNode,
  method: string,
  path: string,
  credential: Credential,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${node.url}${path}`, {
    method,
    headers: {
      ...(typeof credential === "string"
        ? { authorization: `Bearer ${credential}` }
        : { ...sessionHeaders(credential), origin: node.url }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}
