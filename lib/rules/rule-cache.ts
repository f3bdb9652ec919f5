import { ActorCache } from "../auth/actor-cache";
import type { Db } from "../db";
import type { JudgedRule } from "../shared/rules/verdict";
import { runAfterCommit } from "../transaction";
import { toJudgedRule } from "./views";

/**
 * The rules the gate judges every tool call by, remembered per web node (decision 028). Reading
 * the table was a round trip on every verdict for a list that changes when a Lead edits a rule.
 * It is the actor cache's class with one entry, enabled, proven and evicted by the same listener
 * (lib/auth/actor-evictions.ts): migration 015's trigger notifies `rules:all` on any write to the
 * table, and a node that writes a rule evicts at commit. No proven listener, no cache.
 */
const RULES_KEY = "rules";
const RULES_TAG = "rules:all";

// server.ts (run by tsx) and Next's bundled code load modules separately; one cache per process.
const holder = globalThis as typeof globalThis & { handshakeRuleCache?: ActorCache<JudgedRule[]> };

export function getRuleCache(): ActorCache<JudgedRule[]> {
  holder.handshakeRuleCache ??= new ActorCache<JudgedRule[]>({ maxEntries: 1 });
  return holder.handshakeRuleCache;
}

/**
 * Rules that can still apply: expired ones are left in the table for the Rules page, not read.
 * A cached list may hold a rule that has expired since; the gate checks each rule's expiry anyway.
 */
export async function loadLiveRules(db: Db, now: Date): Promise<readonly JudgedRule[]> {
  const cache = getRuleCache();
  const cached = cache.get(RULES_KEY);
  if (cached) return cached;
  // Taken before the read: a rule written meanwhile must not be hidden by this older answer.
  const lease = cache.lease();
  const rows = await db.rule.findMany({
    where: { OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    orderBy: { createdAt: "asc" },
  });
  const rules = rows.map(toJudgedRule);
  cache.set(RULES_KEY, rules, [RULES_TAG], lease);
  return rules;
}

/** Forgets this node's rules once `db`'s transaction commits, so its next verdict reads the change. */
export function evictRulesAfterCommit(db: Db): void {
  runAfterCommit(db, () => getRuleCache().evict([RULES_TAG]));
}
