import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SERVER_NODE_ARGS } from "./server-command";

const scripts = (
  JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> }
).scripts;

describe("the server's Node arguments", () => {
  it.each(["serve", "dev"])("are the ones npm run %s starts it with", (name) => {
    expect(scripts[name]?.endsWith(` node ${SERVER_NODE_ARGS.join(" ")}`)).toBe(true);
  });
});
