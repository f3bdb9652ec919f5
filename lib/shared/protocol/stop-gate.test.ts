import { describe, expect, it } from "vitest";
import { refuseWhileStopping } from "./stop-gate";

describe("refuseWhileStopping", () => {
  it("refuses every mutating tool while stopping, and nothing else", () => {
    for (const tool of ["bash", "write_file", "edit_file", "complete_task"]) {
      expect(refuseWhileStopping(true, tool)).toMatchObject({ code: "AGENT_STOPPING" });
      expect(refuseWhileStopping(false, tool)).toBeNull();
    }
    expect(refuseWhileStopping(true, "read_file")).toBeNull();
  });
});
