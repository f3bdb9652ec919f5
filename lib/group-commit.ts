import { poolOf, type Db } from "./db";

/**
 * Group commit (decision 042): items that arrive while a commit is under way wait for it, then go
 * together in the next one. An item that arrives when no commit is under way goes at once, alone:
 * grouping adds no wait when the node is quiet, and under load it turns many small commits, each
 * serialised on PostgreSQL's NOTIFY lock and WAL flush, into few. One commit is under way at a
 * time (decision 087): a second one, running its statement while the first waits on that lock,
 * split the waiting items into groups half the size, and each group's statement and commit cost
 * PostgreSQL more than the items it added.
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
  private isCommitUnderWay = false;

  constructor(
    private readonly commit: (items: Item[]) => Promise<Outcome[]>,
    private readonly maxItems: number,
  ) {}

  /** Resolves with the item's outcome once the commit that holds it has ended. */
  add(item: Item): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.isCommitUnderWay) void this.commitWaiting();
    });
  }

  private async commitWaiting(): Promise<void> {
    this.isCommitUnderWay = true;
    while (this.waiting.length > 0) {
      const group = this.waiting.splice(0, this.maxItems);
      try {
        const outcomes = await this.commit(group.map((waiting) => waiting.item));
        group.forEach((waiting, index) => waiting.resolve(outcomes[index] as Outcome));
      } catch (error) {
        for (const waiting of group) waiting.reject(error);
      }
    }
    this.isCommitUnderWay = false;
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
  ) {}

  /** Resolves with the item's outcome once the commit that holds it has ended. */
  async add(db: Db, item: Item): Promise<Outcome> {
    const pool = poolOf(db);
    if (!pool) return (await this.commit(db, [item]))[0] as Outcome;
    let group = this.groups.get(pool);
    if (!group) {
      group = new GroupCommit((items) => this.commit(db, items), this.maxItems);
      this.groups.set(pool, group);
    }
    return group.add(item);
  }
}
