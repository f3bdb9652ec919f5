import { describe, expect, it } from "vitest";
import { failureLinesOf, firstLineOf, playwrightFailures, vitestFailures } from "./failed-tests";

describe("the failed tests npm test prints last", () => {
  it("names each failed vitest test by file and full name, with the first line of why", () => {
    const lines = vitestFailures(
      {
        testResults: [
          {
            name: "/repo/tests/api/a.test.ts",
            status: "failed",
            assertionResults: [
              { status: "passed", fullName: "fine" },
              {
                status: "failed",
                fullName: "routes refuse a stranger",
                failureMessages: [
                  "\n\u001b[31mAssertionError: expected 500 to be 401\u001b[39m\n    at x",
                ],
              },
            ],
          },
          { name: "/repo/tests/b.test.ts", status: "failed", message: "Hook timed out in 30000ms" },
          { name: "/repo/tests/c.test.ts", status: "passed", assertionResults: [] },
        ],
      },
      "/repo",
    );
    expect(lines).toEqual([
      "tests/api/a.test.ts › routes refuse a stranger: AssertionError: expected 500 to be 401",
      "tests/b.test.ts: Hook timed out in 30000ms",
    ]);
  });

  it("names each Playwright test that failed or was flaky, under its describe, with its line", () => {
    const lines = playwrightFailures({
      suites: [
        {
          title: "inbox.spec.ts",
          file: "inbox.spec.ts",
          specs: [
            { title: "passes", line: 3, tests: [{ status: "expected", results: [{}] }] },
            {
              title: "approves",
              line: 7,
              tests: [{ status: "unexpected", results: [{ error: { message: "Timed out" } }] }],
            },
          ],
          suites: [
            {
              title: "two Leads",
              file: "inbox.spec.ts",
              specs: [
                {
                  title: "see each other",
                  line: 20,
                  tests: [{ status: "flaky", results: [{ error: { message: "lost" } }, {}] }],
                },
              ],
            },
          ],
        },
      ],
    });
    expect(lines).toEqual([
      "inbox.spec.ts:7 › approves (unexpected): Timed out",
      "inbox.spec.ts:20 › two Leads › see each other (flaky): lost",
    ]);
  });

  it("names what failed outside any Playwright test: a spec that did not load, the web server", () => {
    const lines = playwrightFailures({
      suites: [],
      errors: [
        { message: "SyntaxError: Unexpected token", location: { file: "e2e/a.spec.ts", line: 3 } },
        { message: "Error: Process from config.webServer exited early." },
      ],
    });
    expect(lines).toEqual([
      "e2e/a.spec.ts:3: SyntaxError: Unexpected token",
      "outside any test: Error: Process from config.webServer exited early.",
    ]);
  });

  it("says a step failed outside any test when it names no test", () => {
    expect(failureLinesOf("end to end", [])).toEqual([
      "end to end: failed outside any test; its output above says why",
    ]);
    expect(failureLinesOf("end to end", ["a.spec.ts:3 › x (unexpected): y"])).toEqual([
      "a.spec.ts:3 › x (unexpected): y",
    ]);
  });

  it("keeps a reason to one short line", () => {
    expect(firstLineOf(`${"x".repeat(400)}\nmore`)).toBe(`${"x".repeat(300)}…`);
    expect(firstLineOf(undefined)).toBe("");
  });
});
