import { failureLinesOf } from "./failed-tests";
import { runWatched, type Stall, type StalledProcess } from "./watched-run";

// Later steps still run after a failure so one run reports everything; the exit code is the
// verdict.
export type Counts = { passed: number; failed: number; skipped: number };
export type Step = {
  name: string;
  command: string[];
  counts?: () => Counts;
  failures?: () => string[];
  /** A runner of many files, each under its own timeouts, that says something as each one ends. */
  mayStall?: true;
};
export type Summary = {
  total: Counts;
  failedSteps: string[];
  failedTests: string[];
  stalls: string[];
};

function stallLines(step: Step, stall: Stall): string {
  return (
    `=== ${step.name}: STALLED, printed nothing for ${Math.round(stall.quietMs / 1000)} s; ` +
    `killed with every process under it. What it was waiting on:\n${stall.details}`
  );
}

export async function runSteps(
  steps: Step[],
  options: {
    env: NodeJS.ProcessEnv;
    stallAfterMs: number;
    describe?: (processes: StalledProcess[]) => Promise<string>;
    /** Where the steps' own lines go, and their commands' output: this process's stdout. */
    log?: (line: string) => void;
    output?: NodeJS.WritableStream;
  },
): Promise<Summary> {
  const log = options.log ?? ((line: string) => console.log(line));
  const summary: Summary = {
    total: { passed: 0, failed: 0, skipped: 0 },
    failedSteps: [],
    failedTests: [],
    stalls: [],
  };
  const runStep = (step: Step) => {
    const [command = "", ...args] = step.command;
    return runWatched(command, args, {
      env: options.env,
      stallAfterMs: step.mayStall ? options.stallAfterMs : Number.POSITIVE_INFINITY,
      ...(options.describe ? { describe: options.describe } : {}),
      ...(options.output ? { output: options.output } : {}),
    });
  };
  for (const step of steps) {
    log(`\n=== ${step.name}: ${step.command.join(" ")}`);
    const startedAt = Date.now();
    let run = await runStep(step);
    if (run.stall) {
      // A stall is the runner's or the machine's, not a verdict on a test: one more whole run
      // tells them apart, since a test that hangs hangs again (decision 081).
      log(stallLines(step, run.stall));
      log(`=== ${step.name}: running it once more, from the start`);
      run = await runStep(step);
      if (run.stall) log(stallLines(step, run.stall));
      summary.stalls.push(
        `${step.name}: stalled, ${run.stall ? "and stalled again" : "then ran to its end"}`,
      );
    }
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
    const isOk = run.status === 0 && !run.stall;
    if (!isOk) summary.failedSteps.push(step.name);
    const outcome = run.stall ? "STALLED" : `FAILED (exit ${run.status ?? run.signal})`;
    log(`=== ${step.name}: ${isOk ? "ok" : outcome} in ${seconds}s`);
    if (step.counts) {
      const counts = step.counts();
      summary.total.passed += counts.passed;
      summary.total.failed += counts.failed;
      summary.total.skipped += counts.skipped;
      if (!isOk || counts.failed > 0) {
        summary.failedTests.push(...failureLinesOf(step.name, step.failures?.() ?? []));
      }
    } else if (!isOk) {
      summary.total.failed += 1;
    }
  }
  return summary;
}

/** What CI shows of a run, its tail: the stalls, what failed, and the counts last. */
export function summaryLines(summary: Summary): string[] {
  const { total, failedSteps, failedTests, stalls } = summary;
  const indented = (lines: string[]) => lines.map((line) => `  ${line}`);
  return [
    ...(stalls.length ? ["Stalls:", ...indented(stalls)] : []),
    ...(failedTests.length ? ["Failed tests:", ...indented(failedTests)] : []),
    ...(failedSteps.length ? [`Failed steps: ${failedSteps.join(", ")}`] : []),
    `${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`,
  ];
}
