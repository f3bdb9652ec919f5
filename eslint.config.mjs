import nextCoreWebVitals from "eslint-config-next/core-web-vitals";
import nextTypescript from "eslint-config-next/typescript";
import { defineConfig, globalIgnores } from "eslint/config";

/** Builds a no-restricted-imports rule whose message says where the code belongs. */
function layerRule(forbidden) {
  return [
    "error",
    {
      patterns: forbidden.map(({ layers, message }) => ({
        regex: `^(@/|(\\.\\./)+|\\./)(${layers.join("|")})(/|$)`,
        message,
      })),
    },
  ];
}

export default defineConfig([
  ...nextCoreWebVitals,
  ...nextTypescript,
  globalIgnores([
    "lib/generated/**",
    ".next/**",
    ".data/**",
    "test-results/**",
    "playwright-report/**",
    "next-env.d.ts",
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
  // The layers: app → components → lib. agents reach the server only over HTTP.
  {
    files: ["lib/**/*.{ts,tsx}"],
    rules: {
      "no-restricted-imports": layerRule([
        {
          layers: ["app", "components"],
          message:
            "lib/ is the domain and infrastructure layer and must not depend on UI or routes. Move shared logic into lib/<domain>/ and import it from app/ or components/ instead.",
        },
        {
          layers: ["agents"],
          message:
            "lib/ must not import agents/: agents are clients of the HTTP API. Put code both need (e.g. zod schemas) in lib/ and import it from agents/.",
        },
      ]),
    },
  },
  {
    files: ["components/**/*.{ts,tsx}"],
    rules: {
      "no-restricted-imports": layerRule([
        {
          layers: ["app", "agents"],
          message:
            "components/ must not import app/ or agents/: routes compose components, not the other way round. Move the code to components/ (UI) or lib/ (logic).",
        },
      ]),
    },
  },
  {
    files: ["agents/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(@/|(\\.\\./)+)(app|components)(/|$)",
              message:
                "agents/ talk to the server over HTTP (/api/v1); they never import routes or UI.",
            },
            {
              regex: "^(@/|(\\.\\./)+)lib/(db|generated|auth|migrations)(/|\\.|$)",
              message:
                "agents/ hold no database credentials: call the HTTP API (agents/api-client) instead of lib/db or lib/auth.",
            },
          ],
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
