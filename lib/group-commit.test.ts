import { describe, expect, it } from "vitest";
import { GroupCommit } from "./group-commit";

/** A commit that records each group it is given and ends when the test says so. */
function controlledCommit() {
  const groups: number[][] = [];
  const endings: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const commit = (items: number[]) => {
    groups.push(items);
    return new Promise<string[]>((resolve, reject) => {
      endings.push({
        resolve: () => resolve(items.map((item) => `done ${item}`)),
        reject,
      });
    });
  };
  const end = async (index: number, error?: Error) => {
    const ending = endings[index];
    if (!ending) throw new Error(`commit ${index} has not started`);
    if (error) ending.reject(error);
    else ending.resolve();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { groups, commit, end };
}

describe("GroupCommit", () => {
  it("sends an item at once when no commit is under way, and groups those that wait", async () => {
    const { groups, commit, end } = controlledCommit();
    const committer = new GroupCommit(commit, 3);
    const first = committer.add(1);
    expect(groups).toEqual([[1]]);
    const waiting = [2, 3, 4, 5].map((item) => committer.add(item));
    expect(groups).toEqual([[1]]);
    await end(0);
    expect(await first).toBe("done 1");
    expect(groups).toEqual([[1], [2, 3, 4]]);
    await end(1);
    expect(groups).toEqual([[1], [2, 3, 4], [5]]);
    await end(2);
    expect(await Promise.all(waiting)).toEqual(["done 2", "done 3", "done 4", "done 5"]);
  });

  it("gives a failed commit's error to each of its items, and goes on with the next group", async () => {
    const { groups, commit, end } = controlledCommit();
    const committer = new GroupCommit(commit, 10);
    const first = committer.add(1);
    const failing = [2, 3].map((item) => committer.add(item).catch((error: Error) => error));
    await end(0);
    await first;
    const later = committer.add(4);
    await end(1, new Error("connection lost"));
    for (const outcome of await Promise.all(failing)) {
      expect(outcome).toEqual(new Error("connection lost"));
    }
    expect(groups).toEqual([[1], [2, 3], [4]]);
    await end(2);
    expect(await later).toBe("done 4");
  });
});
