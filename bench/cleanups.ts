/** What the bench started, with its undo. */
export type Cleanup = { name: string; run: () => Promise<unknown> | unknown };

/** Everything started registers its undo; they run in reverse, once, even on failure. */
export class Cleanups {
  private readonly undos: Cleanup[] = [];
  private cleaning: Promise<void> | undefined;

  push(cleanup: Cleanup): void {
    this.undos.push(cleanup);
  }

  /** Runs every undo once; a second caller (a signal during a failure) waits for the same run. */
  run(): Promise<void> {
    this.cleaning ??= (async () => {
      for (const { name, run } of this.undos.reverse()) {
        try {
          await run();
        } catch (error) {
          console.error(`[bench] cleanup '${name}' failed:`, (error as Error).message);
        }
      }
      this.undos.length = 0;
    })();
    return this.cleaning;
  }

  /**
   * Runs the undos before the process ends on a signal (exit 130) or on a failure outside the
   * run's own chain (exit 1): a throw in a callback or a rejection nothing awaited ends the
   * process at once, and left the server on its port, still serving, and its scratch database
   * behind.
   */
  runOnProcessEnd(onSignal: (signal: NodeJS.Signals) => void): void {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      process.on(signal, () => {
        onSignal(signal);
        console.error(`[bench] ${signal}: cleaning up`);
        void this.run().finally(() => process.exit(130));
      });
    }
    for (const event of ["uncaughtException", "unhandledRejection"] as const) {
      process.on(event, (error: unknown) => {
        console.error(`[bench] failed (${event}):`, error);
        void this.run().finally(() => process.exit(1));
      });
    }
  }
}
