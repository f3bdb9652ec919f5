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
        message.ruleId === "no-restricted-imports" ||
        message.ruleId === "handshake/shared-code",
    )
    .map((message) => message.message);
}

// Linting loads the whole config and parsers on first use, slow on a busy machine.
describe("import layering", { timeout: 60_000 }, () => {
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
  ])("refuses the wrong-way import in %s", async (filePath, code, expected) => {
    expect(await layerMessages(filePath, code)).toContainEqual(expect.stringMatching(expected));
  });

  const CLIENT_TO_SERVER = /run outside the server/;
  const SHARED_TO_SERVER = /run in the browser, the agents and the CLI too/;

  it.each([
    ["components/inbox/example.tsx", 'import { getDb } from "@/lib/db";\nexport { getDb };\n'],
    [
      "components/inbox/example.tsx",
      'import { decideRequest } from "@/lib/requests/mutations";\nexport { decideRequest };\n',
    ],
    [
      "agents/example.ts",
      'import { decideRequest } from "../lib/requests/mutations";\nexport { decideRequest };\n',
    ],
    ["agents/tools/example.ts", 'import { env } from "../../lib/env";\nexport { env };\n'],
    ["bin/example.ts", 'import { getDb } from "../lib/db";\nexport { getDb };\n'],
    ["bin/commands/example.ts", 'import { AppError } from "@/lib/errors";\nexport { AppError };\n'],
    // A path that walks out of lib/shared/ is judged by where it lands.
    [
      "components/inbox/example.tsx",
      'import { getDb } from "@/lib/shared/../db";\nexport { getDb };\n',
    ],
    // One runtime name makes the whole import run.
    [
      "components/inbox/example.tsx",
      'import { type Actor, resolveActor } from "@/lib/auth/actor";\nexport { resolveActor, type Actor };\n',
    ],
    ["components/inbox/example.tsx", 'import "@/lib/db";\n'],
    ["components/inbox/example.tsx", 'export { decideRequest } from "@/lib/requests/mutations";\n'],
    ["components/inbox/example.tsx", 'export * from "@/lib/requests/mutations";\n'],
    ["agents/example.ts", 'export const load = () => import("../lib/requests/mutations");\n'],
    [
      "app/(console)/example/view.tsx",
      '"use client";\nimport { getDb } from "@/lib/db";\nexport { getDb };\n',
    ],
  ])("refuses a runtime import of server code from %s", async (filePath, code) => {
    expect(await layerMessages(filePath, code)).toContainEqual(
      expect.stringMatching(CLIENT_TO_SERVER),
    );
  });

  it.each([
    ["lib/shared/protocol/example.ts", 'import { getDb } from "../../db";\nexport { getDb };\n'],
    [
      "lib/shared/display/example.ts",
      'import { queryInteger } from "@/lib/http/query";\nexport { queryInteger };\n',
    ],
    [
      "lib/shared/example.ts",
      'import { decideRequest } from "../requests/mutations";\nexport { decideRequest };\n',
    ],
    ["lib/sdk/example.ts", 'import { AppError } from "../errors";\nexport { AppError };\n'],
    [
      "lib/shared/http/example.ts",
      'export const load = () => import("../../requests/mutations");\n',
    ],
  ])("refuses a runtime import of server code from shared code in %s", async (filePath, code) => {
    expect(await layerMessages(filePath, code)).toContainEqual(
      expect.stringMatching(SHARED_TO_SERVER),
    );
  });

  it.each([
    [
      "components/inbox/example.tsx",
      'import type { RequestView } from "@/lib/requests/views";\nexport type { RequestView };\n',
    ],
    [
      "components/inbox/example.tsx",
      'import { type RequestView } from "@/lib/requests/views";\nexport type { RequestView };\n',
    ],
    ["agents/example.ts", 'import type { Env } from "../lib/env";\nexport type { Env };\n'],
    ["bin/example.ts", 'export type { RequestView } from "../lib/requests/views";\n'],
    [
      "components/inbox/example.tsx",
      'import { apiFetch } from "@/lib/shared/http/api-fetch";\nexport { apiFetch };\n',
    ],
    [
      "agents/tools/example.ts",
      'import { decideGate } from "../../lib/shared/protocol/gate";\nexport { decideGate };\n',
    ],
    ["bin/example.ts", 'import { client } from "../lib/sdk/client";\nexport { client };\n'],
    [
      "lib/shared/protocol/example.ts",
      'import type { Agent } from "../../generated/prisma/client";\nimport { z } from "zod";\nexport { z, type Agent };\n',
    ],
    [
      "lib/shared/display/example.ts",
      'import { decideGate } from "../protocol/gate";\nexport { decideGate };\n',
    ],
    [
      "lib/sdk/example.ts",
      'import { readApiResponse } from "../shared/http/api-fetch";\nimport { client } from "./client";\nexport { readApiResponse, client };\n',
    ],
    // The server itself may run anything in lib/, server components included.
    ["lib/requests/example.ts", 'import { getDb } from "../db";\nexport { getDb };\n'],
    ["app/(console)/example/page.tsx", 'import { getDb } from "@/lib/db";\nexport { getDb };\n'],
  ])("allows %s its types and shared code", async (filePath, code) => {
    expect(await layerMessages(filePath, code)).toEqual([]);
  });

  it("tells lib/agents (a domain) apart from the top-level agents/", async () => {
    expect(
      await layerMessages(
        "lib/tasks/example.ts",
        'import { lockAgent } from "../agents/data";\nexport { lockAgent };\n',
      ),
    ).toEqual([]);
  });

  it("allows imports that follow app → components → lib", async () => {
    expect(
      await layerMessages(
        "components/inbox/example.tsx",
        'import { apiFetch } from "@/lib/shared/http/api-fetch";\nexport { apiFetch };\n',
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
