import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

/**
 * Keeps the file vocabulary docs/ARCHITECTURE.md promises true of the tree, so a newcomer can trust
 * a file's name and place. Run by tests/structure.test.ts (and so by `npm test`), which also runs
 * it on trees made to break each rule.
 */

/** Where product code lives; tests/, e2e/ and bench/ may hold test helpers. */
const PRODUCT_FOLDERS = ["app", "components", "lib", "agents", "scripts", "bin"];
const SOURCE_FILE = /\.(ts|tsx)$/;
const TEST_FILE = /\.test\.(ts|tsx)$/;
const KEBAB_CASE = /^[a-z0-9]+(-[a-z0-9]+)*(\.[a-z0-9]+)*$/;
/** Next's file conventions and dynamic segments, which are not kebab-case by design. */
const ROUTE_SEGMENT = /^(\[{1,2}(\.\.\.)?[a-zA-Z]+\]{1,2}|\([a-z-]+\)|_[a-z-]+)$/;

const RULES = {
  testSupport:
    "test support belongs in tests/support/, not among product files (a name with 'test-support' or 'fixture')",
  appFilesystem:
    "app/ composes pages and routes; filesystem reads belong in lib/<domain>/ (import node:fs there)",
  viewOutsideViews:
    "a to…View function is a view: put it in views.ts of its lib domain (lib/<domain>/views.ts)",
  credentialOutsideTokens:
    "tokens are minted and hashed in lib/tokens/credentials.ts only (one credential module)",
  notKebabCase: "file and folder names are kebab-case",
  sharedWithoutArea:
    "lib/shared/ is sorted by area: put the file in lib/shared/<area>/ (protocol, display, …; docs/ARCHITECTURE.md)",
  serverFileInShared:
    "data.ts, mutations.ts and views.ts read, write and shape database rows: they belong in lib/<domain>/, not in lib/shared/ (which the browser and the agents run)",
  envOutsideEnv:
    "the environment is read in lib/env.ts (the server), agents/env.ts (the agents) and bin/cli/env.ts (the CLI) only; pass settings in as arguments",
  apiRouteInApp:
    "API routes are declared in lib/api/v1/<resource>.ts and listed in lib/api/v1/routes.ts: server.ts hands /api/v1 to that table, never to app/",
};

/** The readers of the environment: the server's, the agents' (decision 015) and the CLI's (018). */
const ENV_READERS = ["lib/env.ts", "agents/env.ts", "bin/cli/env.ts"];
const SERVER_FILE_NAMES = ["data.ts", "mutations.ts", "views.ts"];

export type StructureProblem = { file: string; rule: keyof typeof RULES; message: string };

async function listFiles(root: string, folder: string): Promise<string[]> {
  const entries = await readdir(path.join(root, folder), { withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  for (const entry of entries) {
    const relative = path.posix.join(folder, entry.name);
    if (entry.name === "node_modules" || entry.name === "generated" || entry.name === "dist")
      continue;
    if (entry.isDirectory()) files.push(relative + "/", ...(await listFiles(root, relative)));
    else files.push(relative);
  }
  return files;
}

function isNameAllowed(name: string): boolean {
  return KEBAB_CASE.test(name) || ROUTE_SEGMENT.test(name);
}

/** Every file that breaks a rule, with the rule and where the code belongs instead. */
export async function checkStructure(root: string): Promise<StructureProblem[]> {
  const problems: StructureProblem[] = [];
  const report = (file: string, rule: keyof typeof RULES) =>
    problems.push({ file, rule, message: RULES[rule] });

  for (const folder of PRODUCT_FOLDERS) {
    for (const entry of await listFiles(root, folder)) {
      const file = entry.replace(/\/$/, "");
      const name = path.posix.basename(file);
      if (!isNameAllowed(name)) report(file, "notKebabCase");
      if (entry.endsWith("/") || !SOURCE_FILE.test(name)) continue;
      if (/^lib\/shared\/[^/]+$/.test(file)) report(file, "sharedWithoutArea");
      if (file.startsWith("lib/shared/") && SERVER_FILE_NAMES.includes(name)) {
        report(file, "serverFileInShared");
      }
      if (/test-support|fixture/.test(name) && !TEST_FILE.test(name)) report(file, "testSupport");
      if (TEST_FILE.test(name)) continue;
      const source = await readFile(path.join(root, file), "utf8");
      if (/^app\/api\//.test(file)) report(file, "apiRouteInApp");
      if (folder === "app" && /from "(node:)?fs(\/promises)?"/.test(source)) {
        report(file, "appFilesystem");
      }
      if (
        /^lib\/[^/]+\//.test(file) &&
        name !== "views.ts" &&
        /export (async )?function to[A-Z]\w*View\b/.test(source)
      ) {
        report(file, "viewOutsideViews");
      }
      if (!ENV_READERS.includes(file) && /\bprocess\.env\b/.test(source)) {
        report(file, "envOutsideEnv");
      }
      if (
        file !== "lib/tokens/credentials.ts" &&
        /export (async )?function (hash\w*Token|new\w*Token)\b/.test(source)
      ) {
        report(file, "credentialOutsideTokens");
      }
    }
  }
  return problems;
}
