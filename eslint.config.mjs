import nextCoreWebVitals from "eslint-config-next/core-web-vitals";
import nextTypescript from "eslint-config-next/typescript";
import { defineConfig, globalIgnores } from "eslint/config";
import path from "node:path";

const LAYER_MESSAGES = {
  libToUi:
    "lib/ is the domain and infrastructure layer and must not depend on UI or routes. Move shared logic into lib/<domain>/ and import it from app/ or components/ instead.",
  libToAgents:
    "lib/ must not import agents/: agents are clients of the HTTP API. Put code both need (e.g. zod schemas) in lib/ and import it from agents/.",
  componentsToApp:
    "components/ must not import app/ or agents/: routes compose components, not the other way round. Move the code to components/ (UI) or lib/ (logic).",
  agentsToServer: "agents/ talk to the server over HTTP (/api/v1); they never import routes or UI.",
  agentsToDatabase:
    "agents/ hold no database credentials: call the HTTP API (agents/api-client) instead of lib/db or lib/auth.",
  clientToServer:
    'components/, agents/, bin/ and "use client" modules run outside the server: from lib/ they run only lib/shared/ and lib/sdk/. Import types with `import type`; move a pure part the client needs to lib/shared/<area>/ (docs/decisions/015-shared-code.md), or call the HTTP API.',
  sharedToServer:
    "lib/shared/ and lib/sdk/ run in the browser, the agents and the CLI too: at run time they import only lib/shared/ (lib/sdk/ also itself) and packages. Move what they need into lib/shared/<area>/, or import types only.",
};

const ROOT = import.meta.dirname;
/** What runs outside the server, with app/'s "use client" modules. */
const CLIENT_FOLDERS = ["components", "agents", "bin"];
/** The only lib/ code clients may run; each of these may run lib/shared/ and itself. */
const SHARED_FOLDERS = ["lib/shared", "lib/sdk"];

function isInside(file, folder) {
  const relative = path.relative(path.join(ROOT, folder), file);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/** The file a specifier names, for "@/" and relative paths; null for packages. */
function resolveSpecifier(importer, specifier) {
  if (specifier.startsWith("@/")) return path.join(ROOT, specifier.slice(2));
  if (specifier.startsWith(".") || path.isAbsolute(specifier)) {
    return path.resolve(path.dirname(importer), specifier);
  }
  return null;
}

function isTypeOnlyImport(node) {
  return (
    node.importKind === "type" ||
    (node.specifiers.length > 0 &&
      node.specifiers.every(
        (specifier) => specifier.type === "ImportSpecifier" && specifier.importKind === "type",
      ))
  );
}

function isTypeOnlyExport(node) {
  return (
    node.exportKind === "type" ||
    (node.specifiers.length > 0 &&
      node.specifiers.every((specifier) => specifier.exportKind === "type"))
  );
}

/**
 * Paths are resolved, so "../lib/db", "@/lib/db" and "@/lib/shared/../db" are the same import;
 * only what runs counts (`import type` and `import { type X }` are erased), dynamic import() too.
 */
const sharedCodeRule = {
  meta: {
    type: "problem",
    schema: [],
    messages: {
      clientToServer: LAYER_MESSAGES.clientToServer,
      sharedToServer: LAYER_MESSAGES.sharedToServer,
    },
  },
  create(context) {
    const importer = context.filename;
    const sharedFolder = SHARED_FOLDERS.find((folder) => isInside(importer, folder));
    const isClient =
      CLIENT_FOLDERS.some((folder) => isInside(importer, folder)) ||
      (isInside(importer, "app") &&
        context.sourceCode.ast.body.some((statement) => statement.directive === "use client"));
    if (!sharedFolder && !isClient) return {};
    const check = (node, source, isTypeOnly) => {
      if (isTypeOnly || typeof source !== "string") return;
      const target = resolveSpecifier(importer, source);
      if (!target) return;
      if (sharedFolder) {
        if (!isInside(target, "lib/shared") && !isInside(target, sharedFolder)) {
          context.report({ node, messageId: "sharedToServer" });
        }
      } else if (
        isInside(target, "lib") &&
        !SHARED_FOLDERS.some((folder) => isInside(target, folder))
      ) {
        context.report({ node, messageId: "clientToServer" });
      }
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value, isTypeOnlyImport(node)),
      ExportNamedDeclaration: (node) =>
        node.source && check(node, node.source.value, isTypeOnlyExport(node)),
      ExportAllDeclaration: (node) => check(node, node.source.value, node.exportKind === "type"),
      ImportExpression: (node) =>
        node.source.type === "Literal" && check(node, node.source.value, false),
      TSImportEqualsDeclaration: (node) =>
        node.moduleReference.type === "TSExternalModuleReference" &&
        check(node, node.moduleReference.expression.value, node.importKind === "type"),
    };
  },
};

export default defineConfig([
  ...nextCoreWebVitals,
  ...nextTypescript,
  globalIgnores([
    "lib/generated/**",
    ".next/**",
    ".next-*/**",
    ".data/**",
    "test-results/**",
    "playwright-report/**",
    "next-env.d.ts",
    "bin/dist/**",
  ]),
  {
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "no-console": "off",
      eqeqeq: ["error", "always"],
    },
  },
  // The layers: app → components → lib. agents reach the server only over HTTP. Paths are resolved
  // (relative and "@/" alike), so lib/agents/ is never mistaken for the top-level agents/.
  {
    rules: {
      "import/no-restricted-paths": [
        "error",
        {
          zones: [
            { target: "./lib", from: ["./app", "./components"], message: LAYER_MESSAGES.libToUi },
            { target: "./lib", from: "./agents", message: LAYER_MESSAGES.libToAgents },
            {
              target: "./components",
              from: ["./app", "./agents"],
              message: LAYER_MESSAGES.componentsToApp,
            },
            {
              target: "./agents",
              from: ["./app", "./components"],
              message: LAYER_MESSAGES.agentsToServer,
            },
            {
              target: "./agents",
              from: ["./lib/db.ts", "./lib/generated", "./lib/auth", "./lib/migrations.ts"],
              message: LAYER_MESSAGES.agentsToDatabase,
            },
          ],
        },
      ],
    },
  },
  // Shared versus server code: clients run only lib/shared/ and lib/sdk/, which run only themselves.
  {
    files: [
      "app/**/*.{ts,tsx}",
      "components/**/*.{ts,tsx}",
      "agents/**/*.ts",
      "bin/**/*.ts",
      "lib/shared/**/*.{ts,tsx}",
      "lib/sdk/**/*.{ts,tsx}",
    ],
    plugins: { handshake: { rules: { "shared-code": sharedCodeRule } } },
    rules: { "handshake/shared-code": "error" },
  },
  // The same rule for "@/" imports by name, which also catches a path that does not resolve yet.
  {
    files: ["lib/**/*.{ts,tsx}"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { regex: "^@/(app|components)(/|$)", message: LAYER_MESSAGES.libToUi },
            { regex: "^@/agents(/|$)", message: LAYER_MESSAGES.libToAgents },
          ],
        },
      ],
    },
  },
  {
    files: ["components/**/*.{ts,tsx}"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ regex: "^@/(app|agents)(/|$)", message: LAYER_MESSAGES.componentsToApp }] },
      ],
    },
  },
  {
    files: ["agents/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            { name: "pg", message: "agents/ never connect to PostgreSQL; use the HTTP API." },
            {
              name: "@prisma/client",
              message: "agents/ never connect to PostgreSQL; use the HTTP API.",
            },
          ],
        },
      ],
    },
  },
]);
