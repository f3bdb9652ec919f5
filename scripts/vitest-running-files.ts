import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Reporter, TestModule } from "vitest/node";

// Vitest says nothing of a file until it ends, so a stalled run would not say which file it was
// in. This keeps the files that are running in a file of their own for the stall's description.

export const RUNNING_FILES = path.resolve(
  import.meta.dirname,
  "../test-results/vitest-running.json",
);

export type RunningFile = { file: string; since: number };

export default class RunningFilesReporter implements Reporter {
  private readonly running = new Map<string, number>();
  private readonly file: string;

  constructor(options: { file?: string } = {}) {
    this.file = options.file ?? RUNNING_FILES;
  }

  onInit(): void {
    this.write();
  }

  onTestModuleStart(testModule: TestModule): void {
    this.running.set(testModule.moduleId, Date.now());
    this.write();
  }

  onTestModuleEnd(testModule: TestModule): void {
    this.running.delete(testModule.moduleId);
    this.write();
  }

  private write(): void {
    const running: RunningFile[] = [...this.running].map(([file, since]) => ({ file, since }));
    mkdirSync(path.dirname(this.file), { recursive: true });
    writeFileSync(this.file, JSON.stringify(running));
  }
}
