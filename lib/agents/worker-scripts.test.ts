import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { listWorkerScripts } from "./worker-scripts";

describe("listWorkerScripts", () => {
  it("offers the demo scripts and none of the test suites' own", async () => {
    // The folder holds both kinds, so the filter is what keeps test scripts out of the form.
    expect(existsSync(path.join(process.cwd(), "agents", "scripts", "test-env-probe.json"))).toBe(
      true,
    );
    const names = (await listWorkerScripts()).map((script) => script.name);
    expect(names).toContain("careful-planner");
    expect(names.filter((name) => name.startsWith("test-"))).toEqual([]);
  });
});
