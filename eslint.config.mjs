import nextCoreWebVitals from "eslint-config-next/core-web-vitals";
import nextTypescript from "eslint-config-next/typescript";
import { defineConfig, globalIgnores } from "eslint/config";

const LAYER_MESSAGES = {
  libToUi:
    "lib/ is the domain and infrastructure layer and must not depend on UI or routes. Move shared logic into lib/<domain>/ and import it from app/ or components/ instead.",
  libToAgents:
    "lib/ must not import agents/: agents are clients of the HTTP API. Put code both need (e.g. zod schemas) in lib/ and import it from agents/.",
  componentsToApp:
    "components/ must not import app/ or agents/: routes compose components, not the other way round. Move the code to components/ (UI) or lib/ (logic).",
  agentsToServer: "agents/ talk to the server over HTTP (/api/v1); they never import routes or UI.",
  binToServer:
    "bin/ is a client of the HTTP API: at run time it imports lib/ only from lib/sdk and lib/shared (it is bundled into one file that must not carry server code).",
  agentsToDatabase:
    "agents/ hold no database credentials: call the HTTP API (agents/api-client) instead of lib/db or lib/auth.",
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
            {
              target: "./bin",
              from: ["./app", "./components", "./agents", "./scripts"],
              message: LAYER_MESSAGES.binToServer,
            },
            {
              target: "./bin",
              from: "./lib",
              except: ["./sdk", "./shared"],
              message: LAYER_MESSAGES.binToServer,
            },
          ],
        },
      ],
    },
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
