import { describe, expect, it } from "vitest";
import { buildWarnings } from "./build-without-warnings";

describe("buildWarnings", () => {
  it("finds Turbopack's warnings, coloured or not, and nothing in a clean build", () => {
    const warned = [
      "✓ Generating static pages using 1 worker (9/9) in 200ms",
      "Turbopack build encountered 2 warnings:",
      "./lib/shared/protocol/shell-command.ts",
      "Warning: Module not found: Can't resolve <dynamic>",
      "\u001b[33mWarning: Dynamic filesystem access causes tracing of the whole project\u001b[0m",
    ].join("\n");
    expect(buildWarnings(warned)).toEqual([
      "Turbopack build encountered 2 warnings:",
      "Warning: Module not found: Can't resolve <dynamic>",
      "Warning: Dynamic filesystem access causes tracing of the whole project",
    ]);
    const clean = ["✓ Compiled successfully in 5.9s", "ƒ  (Dynamic)  server-rendered on demand"];
    expect(buildWarnings(clean.join("\n"))).toEqual([]);
  });
});
