import { poolOf, type Db } from "./db";

/** The smallest group a commit beyond the first starts for (decision 067). */
const MIN_ITEMS_FOR_ANOTHER_COMMIT = 2;

/**
 * Group commit (decision 042): items that arrive while a commit is under way wait for it, then go
 * together in the next one. An item that arrives when no commit is under way goes at once, alone:
 * grouping adds no wait when the node is quiet, and under load it turns many small commits, each
 * serialised on PostgreSQL's NOTIFY lock and WAL flush, into few. With two under way (decision
 * 053), one group's statement runs while the other's commit waits on that lock; a commit beyond
 * the first starts only for a group of two or more (decision 067): an item alone on it costs
 * PostgreSQL a statement and a commit of its own, where waiting puts it in the next group.
 *
 * `commit` answers one outcome per item, in the items' order; if it throws, every item of that
 * commit gets the error.
 */
type Waiting<Item, Outcome> = {
  item: Item;
  resolve: (outcome: Outcome) => void;
  reject: (error: unknown) => void;
};

export class GroupCommit<Item, Outcome> {
  private readonly waiting: Waiting<Item, Outcome>[] = [];
  private commitsUnderWay = 0;

  constructor(
    private readonly commit: (items: Item[]) => Promise<Outcome[]>,
    private readonly maxItems: number,
    private readonly maxCommits = 1,
  ) {}

  /** Resolves with the item's outcome once the commit that holds it has ended. */
  add(item: Item): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.isCommitDue()) void this.commitWaiting();
    });
  }

  private isCommitDue(): boolean {
    if (this.commitsUnderWay === 0) return true;
    return (
      this.commitsUnderWay < this.maxCommits && this.waiting.length >= MIN_ITEMS_FOR_ANOTHER_COMMIT
    );
  }

  private async commitWaiting(): Promise<void> {
    this.commitsUnderWay += 1;
    while (this.waiting.length > 0) {
      const group = this.waiting.splice(0, this.maxItems);
      try {
        const outcomes = await this.commit(group.map((waiting) => waiting.item));
        group.forEach((waiting, index) => waiting.resolve(outcomes[index] as Outcome));
      } catch (error) {
        for (const waiting of group) waiting.reject(error);
      }
    }
    this.commitsUnderWay -= 1;
  }
}

/**
 * A grouped statement's groups, one per pool, that is per client made by createDb. A client
 * without our pool (an open transaction among them) commits each item alone, never with anyone
 * else's.
 */
export class GroupCommitPerPool<Item, Outcome> {
  private readonly groups = new WeakMap<object, GroupCommit<Item, Outcome>>();

  constructor(
    private readonly commit: (db: Db, items: Item[]) => Promise<Outcome[]>,
    private readonly maxItems: number,
    private readonly maxCommits = 1,
  ) {}

  /** Resolves with the item's outcome once the commit that holds it has ended. */
  async add(db: Db, item: Item): Promise<Outcome> {
    const pool = poolOf(db);
    if (!pool) return (await this.commit(db, [item]))[0] as Outcome;
    let group = this.groups.get(pool);
    if (!group) {
      group = new GroupCommit((items) => this.commit(db, items), this.maxItems, this.maxCommits);
      this.groups.set(pool, group);
    }
    return group.add(item);
  }
}
