/**
 * The data the bash classifier (tool-risk.ts) judges by, kept in one module so the rules work can
 * extend it without touching the logic. Names are literal command names after quote removal.
 */

/**
 * A command that only reads. It is `read_only` only when none of its arguments uses one of
 * `deniedOptions` (long options in any abbreviation or `--opt=value` form; short ones inside a
 * cluster like `-no`).
 */
export type ReadOnlyCommand = {
  deniedOptions?: readonly string[];
  /** Subcommands that only read (git): the first operand after the global options. */
  subcommands?: Readonly<Record<string, { deniedOptions?: readonly string[] }>>;
};

/**
 * A list's entry for a name the command gave: only the list's own. Indexed directly, a program
 * named `constructor` or `toString` found the object prototype's member and the classifier threw.
 */
export function entryOf<Entry>(
  list: Readonly<Record<string, Entry>> | undefined,
  name: string,
): Entry | undefined {
  return list !== undefined && Object.hasOwn(list, name) ? list[name] : undefined;
}

const GIT_OUTPUT_OPTIONS = ["--output", "--ext-diff", "--textconv"];

export const READ_ONLY_COMMANDS: Readonly<Record<string, ReadOnlyCommand>> = {
  "[": {},
  basename: {},
  cat: {},
  cd: {},
  cmp: {},
  comm: {},
  cut: {},
  date: { deniedOptions: ["-s", "--set", "-f", "--file"] },
  df: {},
  // A glob can expand to a file named `--to-file=..`, which compares with the parent directory.
  diff: { deniedOptions: ["--to-file", "--from-file"] },
  dirname: {},
  // --files0-from takes the names to read from a file, where the workspace check cannot see them.
  du: { deniedOptions: ["--files0-from"] },
  echo: {},
  egrep: {},
  false: {},
  fgrep: {},
  // -f / --files-from (and -c for the checksums, --files0-from for wc and find) read the names to
  // open from a file the workspace check cannot see.
  // -m / --magic-file read a colon-separated list of files, printing each line they cannot parse.
  // -z and -Z run the decompressor a file's first bytes name, found through $PATH; macOS's -M
  // reads a list of magic files as -m does.
  file: {
    deniedOptions: [
      "-C",
      "--compile",
      "-f",
      "--files-from",
      "-m",
      "-M",
      "--magic-file",
      "-z",
      "-Z",
      "--uncompress",
      "--uncompress-noreport",
    ],
  },
  find: {
    deniedOptions: [
      "-delete",
      "-exec",
      "-execdir",
      "-ok",
      "-okdir",
      "-fprint",
      "-fprint0",
      "-fprintf",
      "-fls",
      "-files0-from",
    ],
  },
  grep: {},
  head: {},
  id: {},
  // --run-tests reads jq programs from a file or stdin (a here-doc): `env` among them.
  jq: { deniedOptions: ["-f", "--from-file", "--run-tests"] },
  ls: {},
  md5sum: { deniedOptions: ["-c", "--check"] },
  nl: {},
  printf: { deniedOptions: ["-v"] },
  pwd: {},
  readlink: {},
  realpath: {},
  // ripgrep 14 runs --hostname-bin's program to fill in hyperlinks.
  rg: {
    deniedOptions: ["--pre", "--pre-glob", "--search-zip", "-z", "--ignore-file", "--hostname-bin"],
  },
  seq: {},
  sha1sum: { deniedOptions: ["-c", "--check"] },
  sha256sum: { deniedOptions: ["-c", "--check"] },
  sleep: {},
  sort: {
    deniedOptions: [
      "-o",
      "--output",
      "--compress-program",
      "-T",
      "--temporary-directory",
      "--files0-from",
    ],
  },
  // zsh's stat module (`zmodload zsh/stat`, in a user's rc) assigns with -A and -H.
  stat: { deniedOptions: ["-A", "-H"] },
  tac: {},
  tail: {},
  test: {},
  tr: {},
  tree: { deniedOptions: ["-o", "-R", "-H"] },
  true: {},
  type: {},
  uname: {},
  wc: { deniedOptions: ["--files0-from"] },
  which: {},
  whoami: {},
  git: {
    subcommands: {
      status: {},
      log: { deniedOptions: GIT_OUTPUT_OPTIONS },
      diff: { deniedOptions: GIT_OUTPUT_OPTIONS },
      show: { deniedOptions: GIT_OUTPUT_OPTIONS },
      "rev-parse": {},
      "ls-files": {},
      blame: { deniedOptions: ["--contents"] },
    },
  },
};

/**
 * Commands that run another command, or code from a string, or change how later commands run.
 * The wrapped command is not unwrapped: a person judges the whole call.
 */
const COMMAND_RUNNERS: ReadonlySet<string> = new Set([
  ".",
  "alias",
  "arch",
  "at",
  "batch",
  "bind",
  "builtin",
  "busybox",
  "caffeinate",
  "catchsegv",
  "cgexec",
  "choom",
  "chronic",
  "chroot",
  "chrt",
  "command",
  "compgen",
  "complete",
  "coproc",
  "crontab",
  "cross-env",
  "dbus-run-session",
  "disown",
  "doas",
  "dotenv",
  "enable",
  "env",
  "env-cmd",
  "eval",
  "exec",
  "fakeroot",
  "faketime",
  "fc",
  "firejail",
  "flock",
  "gdb",
  "ifne",
  "ionice",
  "let",
  "linux32",
  "linux64",
  "ltrace",
  "mapfile",
  "nice",
  "nocorrect",
  "noglob",
  "nohup",
  "nsenter",
  "numactl",
  "parallel",
  "pkexec",
  "prlimit",
  "proxychains",
  "proxychains4",
  "readarray",
  "rlwrap",
  "runuser",
  "script",
  "setarch",
  "setpriv",
  "setsid",
  "sg",
  "shopt",
  "source",
  "ssh-agent",
  "stdbuf",
  "strace",
  "su",
  "sudo",
  "systemd-run",
  "taskset",
  "time",
  "timeout",
  "torsocks",
  "trap",
  "unalias",
  "unbuffer",
  "unshare",
  "valgrind",
  "watch",
  "xargs",
  "xvfb-run",
]);

/**
 * Programs whose subcommand runs another command given as its arguments (`uv run git push`,
 * `pnpm exec rm`, `bundle exec …`): with that subcommand among their words they are runners too.
 * Package runners (`npx`, `npm exec`, `uvx`, `pipx run`, `pnpm dlx`, `nix run`) run a package's
 * program, not any command: not here.
 */
const RUNNING_SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  asdf: ["exec"],
  bundle: ["exec"],
  conda: ["run"],
  direnv: ["exec"],
  hatch: ["run"],
  mamba: ["run"],
  micromamba: ["run"],
  mise: ["exec", "x"],
  nix: ["develop", "shell"],
  pdm: ["run"],
  pipenv: ["run"],
  pixi: ["exec", "run"],
  pnpm: ["exec"],
  poetry: ["run"],
  rye: ["run"],
  uv: ["run"],
  yarn: ["exec"],
};

/**
 * Does the program run another command: a runner, or a program given one of its running
 * subcommands? Any of its words counts (`uv --directory x run …`): a false alarm only asks the
 * Lead.
 */
export function isCommandRunner(program: string, words: readonly (string | null)[]): boolean {
  if (COMMAND_RUNNERS.has(program)) return true;
  const subcommands = entryOf(RUNNING_SUBCOMMANDS, program);
  return (
    subcommands !== undefined && words.some((word) => word !== null && subcommands.includes(word))
  );
}

/** Shells: given `-c` they run a string; given no script they run what they read. */
export const SHELLS: ReadonlySet<string> = new Set([
  "ash",
  "bash",
  "csh",
  "dash",
  "fish",
  "ksh",
  "mksh",
  "pwsh",
  "rbash",
  "sh",
  "tcsh",
  "zsh",
]);

/**
 * Interpreters, with the short flags that give them inline code (found inside a cluster such as
 * `-ne`) and the long ones. Without a script operand they read code from standard input.
 */
export const INTERPRETERS: Readonly<
  Record<string, { inlineFlags: string; longFlags?: readonly string[] }>
> = {
  bun: { inlineFlags: "e", longFlags: ["--eval", "--print"] },
  deno: { inlineFlags: "", longFlags: ["eval", "repl"] },
  julia: { inlineFlags: "e", longFlags: ["--eval"] },
  lua: { inlineFlags: "e" },
  node: { inlineFlags: "ep", longFlags: ["--eval", "--print"] },
  nodejs: { inlineFlags: "ep", longFlags: ["--eval", "--print"] },
  osascript: { inlineFlags: "e" },
  perl: { inlineFlags: "eE" },
  php: { inlineFlags: "rR", longFlags: ["--run"] },
  python: { inlineFlags: "c" },
  python2: { inlineFlags: "c" },
  python3: { inlineFlags: "c" },
  Rscript: { inlineFlags: "e" },
  ruby: { inlineFlags: "e" },
  tclsh: { inlineFlags: "" },
};

/** Programs whose first operand is a program in their own language (awk's system() runs commands). */
export const PROGRAM_TAKERS: ReadonlySet<string> = new Set(["awk", "gawk", "mawk", "nawk"]);

/** Tools whose purpose is the network (the sandbox has none; a Lead should see the attempt). */
export const NETWORK_COMMANDS: ReadonlySet<string> = new Set([
  "aria2c",
  "curl",
  "ftp",
  "nc",
  "ncat",
  "netcat",
  "rsync",
  "scp",
  "sftp",
  "socat",
  "ssh",
  "telnet",
  "wget",
]);

/** git subcommands that rewrite history, talk to a remote, or change what git runs. */
export const GIT_NEEDS_APPROVAL: ReadonlySet<string> = new Set([
  "clone",
  "config",
  "daemon",
  "fetch",
  "filter-branch",
  "filter-repo",
  "gc",
  "ls-remote",
  "prune",
  "pull",
  "push",
  "rebase",
  "reflog",
  "remote",
  "replace",
  "request-pull",
  "send-email",
  "submodule",
  "update-ref",
]);

/** git subcommands that are ordinary workspace work unless GIT_DESTRUCTIVE_OPTIONS says otherwise. */
export const GIT_WORKSPACE_SUBCOMMANDS: ReadonlySet<string> = new Set([
  "add",
  "am",
  "apply",
  "bisect",
  "blame",
  "branch",
  "checkout",
  "cherry-pick",
  "clean",
  "commit",
  "describe",
  "diff",
  "format-patch",
  "grep",
  "init",
  "log",
  "ls-files",
  "merge",
  "mv",
  "reset",
  "restore",
  "rev-parse",
  "revert",
  "rm",
  "shortlog",
  "show",
  "stash",
  "status",
  "switch",
  "tag",
  "worktree",
]);

/**
 * Arguments that make a workspace git subcommand rewrite history or throw work away. "*" means
 * every use of the subcommand except with one of `safeOptions`.
 */
export const GIT_DESTRUCTIVE_OPTIONS: Readonly<
  Record<string, { options: readonly string[]; safeOptions?: readonly string[] }>
> = {
  branch: { options: ["-D", "-d", "--delete", "-f", "--force", "-M", "-m", "-C", "--move"] },
  checkout: { options: ["-f", "--force", "--", "."] },
  clean: { options: ["*"], safeOptions: ["-n", "--dry-run"] },
  commit: { options: ["--amend"] },
  reset: { options: ["--hard", "--keep", "--merge"] },
  restore: { options: ["*"] },
  stash: { options: ["drop", "clear"] },
  tag: { options: ["-d", "--delete", "-f", "--force"] },
  worktree: { options: ["remove", "prune"] },
};

/** git global options whose value is the next argument. */
export const GIT_OPTIONS_WITH_VALUE: ReadonlySet<string> = new Set([
  "-C",
  "-c",
  "--config-env",
  "--exec-path",
  "--git-dir",
  "--namespace",
  "--work-tree",
]);

/** git global options that change what git runs or where it looks. */
export const GIT_DANGEROUS_GLOBAL_OPTIONS: ReadonlySet<string> = new Set([
  "-c",
  "--config-env",
  "--exec-path",
  "--git-dir",
  "--work-tree",
]);

/**
 * Variables that change which program runs or what code a shell or interpreter loads; assigning
 * one needs approval. A trailing "*" matches a prefix.
 */
export const SENSITIVE_VARIABLES: readonly string[] = [
  "BASH_ENV",
  "BASH_FUNC_*",
  "BASHOPTS",
  "BROWSER",
  "CDPATH",
  "EDITOR",
  "ENV",
  "GIT_*",
  "HOME",
  "IFS",
  "LD_*",
  "NODE_*",
  "NPM_CONFIG_*",
  "PAGER",
  "PATH",
  "PERL*",
  "PROMPT_COMMAND",
  "PS4",
  "PYTHON*",
  "RUBY*",
  "SHELLOPTS",
  "VISUAL",
];

/**
 * Absolute paths that count as inside: the null device, the standard streams, and /tmp, which is
 * private to each sandboxed call. A trailing "/*" allows everything below.
 */
export const ALLOWED_ABSOLUTE_PATHS: readonly string[] = [
  "/dev/null",
  "/dev/stdin",
  "/dev/stdout",
  "/dev/stderr",
  "/dev/fd/*",
  "/dev/zero",
  "/dev/random",
  "/dev/urandom",
  "/tmp",
  "/tmp/*",
];

/** A command named by an absolute path in one of these is judged by its base name. */
export const SYSTEM_BINARY_DIRECTORIES: readonly string[] = [
  "/bin",
  "/sbin",
  "/usr/bin",
  "/usr/local/bin",
  "/usr/sbin",
];

/**
 * Marked by the Lead (and, later, by rules): a simple command whose name and literal arguments,
 * joined by single spaces, equal or start with one of these (followed by a space) needs approval.
 */
export const LEAD_MARKED_COMMANDS: readonly string[] = ["docker", "kubectl", "npm publish"];

/**
 * Options that take their value as the next word, for the programs where it matters which word
 * is an operand: a value is no grep pattern (`grep --exclude-from ~/.x y` reads `~/.x`, whose path
 * is then checked), and no date to set (`date -d yesterday +%F` only prints).
 */
export const SEPARATE_VALUE_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  date: ["-d", "-r", "--date", "--reference"],
  grep: [
    "-e",
    "-f",
    "-m",
    "-A",
    "-B",
    "-C",
    "-d",
    "-D",
    "--regexp",
    "--file",
    "--max-count",
    "--after-context",
    "--before-context",
    "--context",
    "--directories",
    "--devices",
    "--exclude",
    "--exclude-from",
    "--exclude-dir",
    "--include",
    "--label",
    "--binary-files",
    "--group-separator",
  ],
  rg: [
    "-e",
    "-f",
    "-g",
    "-t",
    "-T",
    "-m",
    "-A",
    "-B",
    "-C",
    "-E",
    "-M",
    "-j",
    "-r",
    "-d",
    "--regexp",
    "--file",
    "--glob",
    "--iglob",
    "--type",
    "--type-not",
    "--type-add",
    "--max-count",
    "--after-context",
    "--before-context",
    "--context",
    "--encoding",
    "--max-columns",
    "--threads",
    "--ignore-file",
    "--pre",
    "--pre-glob",
    "--replace",
    "--path-separator",
    "--max-depth",
    "--max-filesize",
    "--sort",
    "--sortr",
    "--colors",
    "--context-separator",
    "--field-match-separator",
    "--field-context-separator",
    "--hostname-bin",
    "--hyperlink-format",
    "--dfa-size-limit",
    "--regex-size-limit",
    "--engine",
  ],
};
