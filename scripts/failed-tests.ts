// CI shows only the tail of `npm test`'s output: the names of the tests that failed, and the first
// line of why, are read back from the runners' JSON reports and printed last.

export type VitestReport = {
  testResults?: {
    name: string;
    status?: string;
    message?: string;
    assertionResults?: { status: string; fullName: string; failureMessages?: string[] }[];
  }[];
};

type PlaywrightSuite = {
  title: string;
  file?: string;
  specs?: {
    title: string;
    line?: number;
    tests?: { status?: string; results?: { error?: { message?: string } }[] }[];
  }[];
  suites?: PlaywrightSuite[];
};
export type PlaywrightReport = {
  suites?: PlaywrightSuite[];
  /** What failed outside any test: a spec that did not load, the web server, a global setup. */
  errors?: { message?: string; location?: { file: string; line: number } }[];
};

const MAX_REASON = 300;

/** The first line of a failure that says something, without terminal colours, kept short. */
export function firstLineOf(message: string | undefined): string {
  const plain = (message ?? "").replace(/\u001b\[[0-9;]*m/g, "");
  const line = plain.split("\n").find((candidate) => candidate.trim() !== "") ?? "";
  const trimmed = line.trim();
  return trimmed.length > MAX_REASON ? `${trimmed.slice(0, MAX_REASON)}…` : trimmed;
}

function relative(file: string, root: string): string {
  return file.startsWith(`${root}/`) ? file.slice(root.length + 1) : file;
}

export function vitestFailures(report: VitestReport, root: string): string[] {
  const lines: string[] = [];
  for (const file of report.testResults ?? []) {
    const failed = (file.assertionResults ?? []).filter((test) => test.status === "failed");
    for (const test of failed) {
      const reason = firstLineOf(test.failureMessages?.[0]);
      lines.push(`${relative(file.name, root)} › ${test.fullName}: ${reason}`);
    }
    if (failed.length === 0 && file.status === "failed") {
      lines.push(`${relative(file.name, root)}: ${firstLineOf(file.message)}`);
    }
  }
  return lines;
}

export function playwrightFailures(report: PlaywrightReport): string[] {
  const lines: string[] = [];
  // A file's own suite is titled by the file, which `where` already names.
  const visit = (suite: PlaywrightSuite, path: string[]) => {
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests ?? []) {
        if (test.status === "expected" || test.status === "skipped") continue;
        const error = test.results?.find((result) => result.error)?.error;
        const name = [...path, spec.title].join(" › ");
        const where = `${suite.file ?? ""}:${spec.line ?? ""}`;
        lines.push(`${where} › ${name} (${test.status}): ${firstLineOf(error?.message)}`);
      }
    }
    for (const child of suite.suites ?? []) visit(child, [...path, child.title]);
  };
  for (const suite of report.suites ?? []) visit(suite, []);
  for (const error of report.errors ?? []) {
    const where = error.location
      ? `${error.location.file}:${error.location.line}`
      : "outside any test";
    lines.push(`${where}: ${firstLineOf(error.message)}`);
  }
  return lines;
}

/** What a failed step names: its failed tests, or, with none to name, that it failed outside any. */
export function failureLinesOf(stepName: string, named: readonly string[]): string[] {
  return named.length
    ? [...named]
    : [`${stepName}: failed outside any test; its output above says why`];
}
