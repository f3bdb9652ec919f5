import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkStructure } from "../scripts/check-structure";

const roots: string[] = [];

async function treeWith(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), "structure-"));
  roots.push(root);
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text);
  }
  return root;
}

afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

describe("the structure check", () => {
  it("passes on this repository", async () => {
    expect(await checkStructure(path.resolve(import.meta.dirname, ".."))).toEqual([]);
  });

  it("passes on a tree that follows every rule", async () => {
    const root = await treeWith({
      "lib/widgets/views.ts": "export function toWidgetView() {}\n",
      "lib/tokens/credentials.ts": "export function hashToken() {}\n",
      "app/(console)/widgets/[id]/page.tsx": "export default function Page() {}\n",
      "tests/support/widget-fixtures.ts": "export const widget = {};\n",
      "lib/shared/widgets/schema.ts": "export const WIDGET_KINDS = [];\n",
      "lib/env.ts": "export const env = process.env;\n",
      "agents/env.ts": "export const env = process.env;\n",
    });
    expect(await checkStructure(root)).toEqual([]);
  });

  it.each([
    ["agents/tools/test-support.ts", "export const harness = {};\n", "testSupport"],
    ["lib/widgets/fixtures.ts", "export const widget = {};\n", "testSupport"],
    [
      "app/(console)/widgets/list.ts",
      'import { readdir } from "node:fs/promises";\n',
      "appFilesystem",
    ],
    ["app/(console)/widgets/route.ts", 'import { readFileSync } from "fs";\n', "appFilesystem"],
    ["app/api/v1/widgets/route.ts", "export const GET = () => null;\n", "apiRouteInApp"],
    ["lib/widgets/data.ts", "export function toWidgetView() {}\n", "viewOutsideViews"],
    ["lib/auth/actor.ts", "export function hashToken() {}\n", "credentialOutsideTokens"],
    ["lib/agents/mutations.ts", "export function newAgentToken() {}\n", "credentialOutsideTokens"],
    ["components/team/TeamBoard.tsx", "export {};\n", "notKebabCase"],
    ["lib/shared/gate.ts", "export {};\n", "sharedWithoutArea"],
    ["lib/shared/widgets/data.ts", "export {};\n", "serverFileInShared"],
    ["lib/shared/widgets/mutations.ts", "export {};\n", "serverFileInShared"],
    ["lib/shared/widgets/views.ts", "export {};\n", "serverFileInShared"],
    ["agents/tools/sandbox.ts", "const path = process.env.PATH;\n", "envOutsideEnv"],
    ["lib/shared/env/agent-env.ts", "export const env = process.env;\n", "envOutsideEnv"],
  ])("fails on a misplaced file: %s", async (file, text, rule) => {
    const problems = await checkStructure(await treeWith({ [file]: text }));
    expect(problems).toEqual([expect.objectContaining({ file, rule })]);
  });
});
