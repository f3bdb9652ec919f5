import { resolveActor, type Actor, type AgentActor } from "../lib/auth/actor";
import { createDb } from "../lib/db";
import type { PrismaClient } from "../lib/generated/prisma/client";
import { decideRequest, submitRequest } from "../lib/requests/mutations";
import type { Agent } from "./clients";
import { now } from "./stats";

export type WritesAloneRate = { perSecond: number; count: number };

export type WritesAlone = {
  /** `concurrency` callers submit plans round-robin over their own agents until `durationMs`. */
  submit(durationMs: number): Promise<WritesAloneRate>;
  /** Approves every plan the submissions left pending, `concurrency` at once. */
  decidePending(): Promise<WritesAloneRate>;
  close(): Promise<void>;
};

/**
 * Executions of a prepared statement after which PostgreSQL keeps its generic plan: until then it
 * plans it on each (decision 037).
 */
const EXECUTIONS_TO_GENERIC_PLAN = 6;

/**
 * G3.3's writes without HTTP: the domain functions its routes call (`submitRequest`,
 * `decideRequest`), called in the bench's own process through a pool of their own, `concurrency`
 * callers at once on G3.3's agents (each caller owns a disjoint slice). Each takes its
 * one-statement path (decisions 030, 031), committed in groups (decisions 053, 054), so what
 * remains is that statement in PostgreSQL, with its commit and its events' NOTIFY, and the
 * driver: what these writes reach on this machine however cheap the API in front of them became.
 * A round's submissions leave one pending plan per agent and its decisions approve them all, as
 * G3.3's do, so the next round starts alike.
 */
export async function openWritesAlone(options: {
  databaseUrl: string;
  agents: Agent[];
  /** The Lead's API token: the decisions are made for the Lead it names. */
  leadToken: string;
  concurrency: number;
}): Promise<WritesAlone> {
  return onPoolOfItsOwn(options.databaseUrl, async (db) => {
    const writes = await writesAloneOn(db, options);
    // Each connection's statements are prepared and planned, as G3.3's server's long were.
    await writes.submitWhile((turn) => turn < EXECUTIONS_TO_GENERIC_PLAN);
    await writes.decidePending();
    return {
      async submit(durationMs: number) {
        const startedAt = now();
        const deadline = startedAt + durationMs;
        const count = await writes.submitWhile(() => now() < deadline);
        return { perSecond: count / ((now() - startedAt) / 1000), count };
      },
      decidePending: writes.decidePending,
    };
  });
}

/** What `open` makes on a pool of its own, which its `close` ends; ended at once if `open` fails. */
async function onPoolOfItsOwn<T>(
  databaseUrl: string,
  open: (db: PrismaClient) => Promise<T>,
): Promise<T & { close(): Promise<void> }> {
  const db = createDb(databaseUrl);
  try {
    return { ...(await open(db)), close: () => db.$disconnect() };
  } catch (error) {
    await db.$disconnect();
    throw error;
  }
}

/** The callers are the agents and the Lead as the routes resolve their tokens. */
async function actorOf(db: PrismaClient, token: string): Promise<Actor | null> {
  return resolveActor(db, new Headers({ authorization: `Bearer ${token}` }));
}

async function leadOf(db: PrismaClient, leadToken: string) {
  const lead = await actorOf(db, leadToken);
  if (lead?.kind !== "human") throw new Error("the Lead's token names no human");
  return lead;
}

async function agentOf(db: PrismaClient, agent: Agent): Promise<AgentActor> {
  const actor = await actorOf(db, agent.token);
  if (actor?.kind !== "agent") throw new Error(`${agent.name}'s token names no agent`);
  return actor;
}

export type LoopWritesAlone = {
  /** Each loop's milliseconds: a plan submitted, then approved, `loops` times. */
  measure(loops: number): Promise<number[]>;
  close(): Promise<void>;
};

/**
 * G3.2's two writes without HTTP: one agent's plan submitted (`submitRequest`) and approved for
 * the Lead (`decideRequest`), back to back, in the bench's process through a pool of its own, with
 * the server still publishing their events. What the loop pays for its writes (both statements,
 * their commits and their events' NOTIFY, and the driver) before HTTP, the console's push and the
 * agent's long-poll add their share: the rest of G3.2's loop is the API's.
 */
export async function openLoopWritesAlone(options: {
  databaseUrl: string;
  agent: Agent;
  leadToken: string;
}): Promise<LoopWritesAlone> {
  return onPoolOfItsOwn(options.databaseUrl, async (db) => {
    const lead = await leadOf(db, options.leadToken);
    const agent = await agentOf(db, options.agent);
    const loop = async (turn: number) => {
      const { request } = await submitRequest(db, agent, {
        type: "plan_approval",
        payload: { plan: `loop without the server ${turn}` },
      });
      await decideRequest(db, lead, request.id, { type: "plan_approval_response", approve: true });
    };
    for (let turn = 0; turn < EXECUTIONS_TO_GENERIC_PLAN; turn++) await loop(turn);
    return {
      async measure(loops: number) {
        const loopMs: number[] = [];
        for (let turn = 0; turn < loops; turn++) {
          const startedAt = now();
          await loop(turn);
          loopMs.push(now() - startedAt);
        }
        return loopMs;
      },
    };
  });
}

async function writesAloneOn(
  db: PrismaClient,
  options: { agents: Agent[]; leadToken: string; concurrency: number },
) {
  const { concurrency } = options;
  const lead = await leadOf(db, options.leadToken);
  const actors: AgentActor[] = [];
  for (const agent of options.agents) actors.push(await agentOf(db, agent));
  const slices = Array.from({ length: concurrency }, (_, caller) =>
    actors.filter((_, index) => index % concurrency === caller),
  );
  if (slices.some((slice) => slice.length === 0)) {
    throw new Error(`${actors.length} agents: fewer than ${concurrency} callers need`);
  }
  const pending = new Map<string, string>();

  const submitWhile = async (isDue: (turn: number) => boolean): Promise<number> => {
    let submitted = 0;
    await Promise.all(
      slices.map(async (mine) => {
        for (let turn = 0; isDue(turn); turn++) {
          const actor = mine[turn % mine.length] as AgentActor;
          const { request } = await submitRequest(db, actor, {
            type: "plan_approval",
            payload: { plan: `plan without the server ${turn}` },
          });
          pending.set(actor.agentId, request.id);
          submitted += 1;
        }
      }),
    );
    return submitted;
  };

  const decidePending = async (): Promise<WritesAloneRate> => {
    const requestIds = [...pending.values()];
    pending.clear();
    const startedAt = now();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let id = requestIds[next++]; id !== undefined; id = requestIds[next++]) {
          await decideRequest(db, lead, id, { type: "plan_approval_response", approve: true });
        }
      }),
    );
    return {
      perSecond: requestIds.length / ((now() - startedAt) / 1000),
      count: requestIds.length,
    };
  };

  return { submitWhile, decidePending };
}
