import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { envSchema } from "./env";

describe("the environment the server and the agents read (lib/env.ts)", () => {
  it("is every variable README's configuration names", () => {
    // README's table had fallen behind: HANDSHAKE_DEMO, ANTHROPIC_API_KEY and the worker's own.
    const readme = readFileSync("README.md", "utf8");
    const named = (variable: string) =>
      readme.includes(`\`${variable}\``) ||
      (variable.startsWith("BENCH_") && readme.includes("`BENCH_*`"));
    const variables = Object.keys(envSchema.shape);
    expect(variables.length).toBeGreaterThan(30);
    expect(variables.filter((variable) => !named(variable))).toEqual([]);
  });
});
