import path from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const eslint = new ESLint({ cwd: path.resolve(import.meta.dirname, "..") });

async function layerMessages(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? [])
    .filter(
      (message) =>
        message.ruleId === "import/no-restricted-paths" ||
        message.ruleId === "no-restricted-imports",
    )
    .map((message) => message.message);
}

describe("import layering", () => {
  it.each([
    [
      "lib/requests/example.ts",
      'import { Button } from "@/components/ui/button";\nexport { Button };\n',
      /lib\/ is the domain/,
    ],
    [
      "lib/requests/example.ts",
      'import page from "../../app/(console)/page";\nexport { page };\n',
      /lib\/ is the domain/,
    ],
    [
      "lib/requests/example.ts",
      'import * as worker from "@/agents/worker";\nexport { worker };\n',
      /agents are clients of the HTTP API/,
    ],
    [
      "components/inbox/example.tsx",
      'import page from "@/app/(console)/page";\nexport { page };\n',
      /routes compose components/,
    ],
    [
      "agents/example.ts",
      'import { getDb } from "../lib/db";\nexport { getDb };\n',
      /hold no database credentials/,
    ],
    ["agents/example.ts", 'import pg from "pg";\nexport { pg };\n', /never connect to PostgreSQL/],
    [
      "bin/cli/example.ts",
      'import { getDb } from "../../lib/db";\nexport { getDb };\n',
      /bin\/ is a client of the HTTP API/,
    ],
    [
      "bin/cli/example.ts",
      'import { classifyToolCall } from "../../lib/protocol/tool-risk";\nexport { classifyToolCall };\n',
      /bin\/ is a client of the HTTP API/,
    ],
  ])("refuses the wrong-way import in %s", async (filePath, code, expected) => {
    const messages = await layerMessages(filePath, code);
    expect(messages.length).toBeGreaterThan(0);
    for (const message of messages) expect(message).toMatch(expected);
  });

  it("tells lib/agents (a domain) apart from the top-level agents/", async () => {
    expect(
      await layerMessages(
        "lib/tasks/example.ts",
        'import { lockAgent } from "../agents/data";\nexport { lockAgent };\n',
      ),
    ).toEqual([]);
  });

  it("lets bin/ use the SDK and the shared schemas", async () => {
    expect(
      await layerMessages(
        "bin/cli/example.ts",
        'import { HandshakeClient } from "../../lib/sdk/agent-client";\nimport { eventSchema } from "../../lib/shared/api/event";\nexport { HandshakeClient, eventSchema };\n',
      ),
    ).toEqual([]);
  });

  it("allows imports that follow app → components → lib", async () => {
    expect(
      await layerMessages(
        "components/inbox/example.tsx",
        'import { AppError } from "@/lib/errors";\nexport { AppError };\n',
      ),
    ).toEqual([]);
    expect(
      await layerMessages(
        "app/example/page.tsx",
        'import { Button } from "@/components/ui/button";\nexport { Button };\n',
      ),
    ).toEqual([]);
  });
});
