import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

// A test runner can stall with every test's own timeout still armed: a worker whose event loop
// never comes back, or a runner waiting on a worker that never answers (decision 081). Nothing
// inside the run can notice; this watches it from outside, by its output.

/** One process of a stalled run, read from /proc when the stall was noticed. */
export type StalledProcess = {
  pid: number;
  ppid: number;
  /** The kernel's one-letter state: R running, S sleeping, D uninterruptible, Z zombie, … */
  state: string;
  /** The kernel function a sleeping process waits in. */
  waitsIn: string;
  /** Its arguments as it was started, and them joined with spaces for reading. */
  args: string[];
  commandLine: string;
};

export type Stall = {
  quietMs: number;
  /** The run's process and every descendant still parented under it. */
  processes: StalledProcess[];
  /** Whatever `describe` added, read before anything was killed. */
  details: string;
};

export type WatchedRun = {
  status: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the run was killed for printing nothing for `stallAfterMs`. */
  stall: Stall | null;
};

/** How long after the run's own exit its output may still arrive. */
const PIPES_DRAIN_MS = 2_000;
/** A description that cannot finish must not keep the stalled run standing. */
const DESCRIBE_LIMIT_MS = 30_000;

function readProc(pid: number, file: string): string {
  try {
    return readFileSync(`/proc/${pid}/${file}`, "utf8");
  } catch {
    return "";
  }
}

function processOf(pid: number): StalledProcess | null {
  const stat = readProc(pid, "stat");
  // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so split after the last ")".
  const afterName = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  if (afterName.length < 2) return null;
  const args = readProc(pid, "cmdline").split("\0").filter(Boolean);
  return {
    pid,
    ppid: Number(afterName[1]),
    state: afterName[0] ?? "?",
    waitsIn: readProc(pid, "wchan") || "-",
    args,
    commandLine: args.join(" "),
  };
}

/** `root` and everything below it that is still its descendant, parents before children. */
export function processTree(root: number): StalledProcess[] {
  const all = readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map((entry) => processOf(Number(entry)))
    .filter((found): found is StalledProcess => found !== null);
  const tree: StalledProcess[] = [];
  const frontier = [root];
  while (frontier.length) {
    const pid = frontier.shift() as number;
    const found = all.find((candidate) => candidate.pid === pid);
    if (found) tree.push(found);
    frontier.push(...all.filter((candidate) => candidate.ppid === pid).map((child) => child.pid));
  }
  return tree;
}

export function formatProcesses(processes: StalledProcess[]): string {
  return processes
    .map(
      (found) =>
        `${found.pid} (parent ${found.ppid}) ${found.state} in ${found.waitsIn}: ` +
        found.commandLine.slice(0, 200),
    )
    .join("\n");
}

function signalEach(processes: StalledProcess[], signal: NodeJS.Signals): void {
  for (const found of processes) {
    try {
      process.kill(found.pid, signal);
    } catch {
      // Gone on its own between the read and the signal.
    }
  }
}

/**
 * Freezes the tree first, so no process in it can start another (a supervisor respawning its
 * worker) between the read and the kill, then reads it again and kills all of it.
 */
function killTree(root: number): void {
  let frozen: StalledProcess[] = [];
  for (let tree = processTree(root); tree.length > frozen.length; tree = processTree(root)) {
    signalEach(tree, "SIGSTOP");
    frozen = tree;
  }
  signalEach(frozen, "SIGKILL");
}

/**
 * Runs `command` with its output passed through, and kills it and every process under it once
 * it has printed nothing for `stallAfterMs`. `describe` runs first, while the stalled processes
 * still stand, for what only the caller knows how to read. A run that ends on its own while it
 * is being described was not stalled after all.
 */
export function runWatched(
  command: string,
  args: string[],
  options: {
    env: NodeJS.ProcessEnv;
    stallAfterMs: number;
    output?: NodeJS.WritableStream;
    errorOutput?: NodeJS.WritableStream;
    describe?: (processes: StalledProcess[]) => Promise<string>;
  },
): Promise<WatchedRun> {
  const output = options.output ?? process.stdout;
  const errorOutput = options.errorOutput ?? options.output ?? process.stderr;
  const child = spawn(command, args, { env: options.env, stdio: ["inherit", "pipe", "pipe"] });
  const isRunning = () => child.exitCode === null && child.signalCode === null;
  let lastOutputAt = Date.now();
  child.stdout.on("data", (chunk: Buffer) => {
    lastOutputAt = Date.now();
    output.write(chunk);
  });
  child.stderr.on("data", (chunk: Buffer) => {
    lastOutputAt = Date.now();
    errorOutput.write(chunk);
  });

  let stall: Stall | null = null;
  let described: Promise<void> = Promise.resolve();
  const watch = setInterval(
    () => {
      const quietMs = Date.now() - lastOutputAt;
      if (stall || quietMs < options.stallAfterMs || child.pid === undefined) return;
      const root = child.pid;
      const processes = processTree(root);
      const found: Stall = { quietMs, processes, details: "" };
      stall = found;
      described = Promise.race([
        options.describe?.(processes) ?? Promise.resolve(""),
        new Promise<string>((resolve) =>
          setTimeout(() => resolve("(no description within its time)"), DESCRIBE_LIMIT_MS).unref(),
        ),
      ])
        .catch((error: unknown) => `(could not describe the stall: ${String(error)})`)
        .then((details) => {
          found.details = details;
          // A run that ended meanwhile has no tree left to kill, and its pid may be another's.
          if (isRunning()) killTree(root);
        });
    },
    Math.min(1_000, options.stallAfterMs),
  );

  return new Promise((resolve) => {
    let isDone = false;
    const finish = (status: number | null, signal: NodeJS.Signals | null) => {
      if (isDone) return;
      isDone = true;
      clearInterval(watch);
      const wasKilled = signal === "SIGKILL";
      void described.then(() => resolve({ status, signal, stall: wasKilled ? stall : null }));
    };
    child.once("error", (error) => {
      errorOutput.write(`${command}: ${error.message}\n`);
      finish(null, null);
    });
    // "close" waits for the pipes too, which a process the run left behind may hold open forever.
    child.once("exit", (status, signal) => {
      setTimeout(() => finish(status, signal), PIPES_DRAIN_MS).unref();
    });
    child.once("close", (status, signal) => finish(status, signal));
  });
}
