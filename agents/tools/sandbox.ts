import { execFile, spawn } from "node:child_process";
import { constants, lstatSync, readlinkSync, type Stats } from "node:fs";
import { chmod, lstat, open } from "node:fs/promises";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import type { AgentEnv } from "../../lib/shared/env/agent-env";
import { sandboxSyscallFilter } from "./seccomp-filter";

/** Tool result code for a bash call refused because no sandbox can be had on this machine. */
export const SANDBOX_UNAVAILABLE = "SANDBOX_UNAVAILABLE";
/** Marks a bash result whose workspace is over its disk quota (the call ran with writes disabled). */
export const WORKSPACE_OVER_QUOTA = "WORKSPACE_OVER_QUOTA";
export const INSTALL_HINT = "install bubblewrap: apt-get install bubblewrap";

export const MAX_STREAM_BYTES = 64 * 1024;
const PIPE_GRACE_MS = 500;
const MIB = 1024 * 1024;

/** Where the workspace appears inside the sandbox; the host path is never shown to the command. */
export const SANDBOX_WORKSPACE = "/workspace";
const SANDBOX_UID = 1000;
const SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin";

export type SandboxLimits = {
  cpuSeconds: number;
  memoryBytes: number;
  processes: number;
  fileBytes: number;
  tmpBytes: number;
  workspaceQuotaBytes: number;
};

/** The host uid/gid a sandboxed command runs as, when it is not the worker's own. */
export type HostIdentity = { uid: number; gid: number };

export type SandboxSettings = {
  bwrapPath: string;
  /** Set when the worker runs as root: root is exempt from RLIMIT_NPROC, so the sandbox is not root. */
  identity: HostIdentity | null;
  limits: SandboxLimits;
};

export type SandboxState =
  | { status: "sandboxed"; settings: SandboxSettings }
  /** Without a sandbox the file tools still keep to the quota, when the probe knew it. */
  | { status: "no_sandbox"; reason: string; workspaceQuotaBytes?: number };

/** The workspace's quota in bytes, whether or not bash can run. */
export function workspaceQuotaOf(sandbox: SandboxState): number | undefined {
  return sandbox.status === "sandboxed"
    ? sandbox.settings.limits.workspaceQuotaBytes
    : sandbox.workspaceQuotaBytes;
}

export type BashOutcome = {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  isTimedOut: boolean;
  stdout: string;
  stderr: string;
};

export function readSandboxSettings(settings: AgentEnv, isRoot: boolean): SandboxSettings {
  return {
    bwrapPath: settings.HANDSHAKE_BWRAP_PATH,
    identity: isRoot
      ? { uid: settings.HANDSHAKE_SANDBOX_UID, gid: settings.HANDSHAKE_SANDBOX_GID }
      : null,
    limits: {
      cpuSeconds: settings.HANDSHAKE_SANDBOX_CPU_SECONDS,
      memoryBytes: settings.HANDSHAKE_SANDBOX_MEMORY_MB * MIB,
      processes: settings.HANDSHAKE_SANDBOX_PROCESSES,
      fileBytes: settings.HANDSHAKE_SANDBOX_FILE_MB * MIB,
      tmpBytes: settings.HANDSHAKE_SANDBOX_TMP_MB * MIB,
      workspaceQuotaBytes: settings.HANDSHAKE_WORKSPACE_QUOTA_MB * MIB,
    },
  };
}

// The files a shell and common tools look up in /etc, generated: the host's own (users, hosts,
// configuration of installed services) say nothing the command needs.
const ETC_FILES = {
  "/etc/passwd": `root:x:0:0:root:/root:/usr/sbin/nologin\nagent:x:${SANDBOX_UID}:${SANDBOX_UID}:agent:${SANDBOX_WORKSPACE}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
  "/etc/group": `root:x:0:\nagent:x:${SANDBOX_UID}:\nnogroup:x:65534:\n`,
  "/etc/hosts": "127.0.0.1 localhost sandbox\n::1 localhost\n",
  "/etc/nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
} as const;

// Not secret and needed by ordinary tools: the dynamic linker's cache, Debian's alternatives
// (awk, editor, ...), the time zone.
const ETC_FROM_HOST = ["/etc/ld.so.cache", "/etc/alternatives", "/etc/localtime"];

const PROC_KEY_FILES = ["/proc/keys", "/proc/key-users"];

/** First fd of the extra pipes: 0-2 are stdio, 3 carries bwrap's arguments, 4 the workspace. */
const ARGS_FD = 3;
const WORKSPACE_FD = 4;
const FIRST_DATA_FD = 5;
/** After the generated /etc files: the seccomp program, where this architecture has one. */
const SECCOMP_FD = FIRST_DATA_FD + Object.keys(ETC_FILES).length;
const SECCOMP_FILTER = sandboxSyscallFilter();

/** /bin, /lib, ... are symlinks into /usr on merged-/usr systems and directories elsewhere. */
function systemRootArgs(): string[] {
  const args: string[] = [];
  for (const name of ["bin", "sbin", "lib", "lib32", "lib64", "libx32"]) {
    const host = `/${name}`;
    let info: Stats;
    try {
      info = lstatSync(host);
    } catch {
      continue;
    }
    if (info.isSymbolicLink()) args.push("--symlink", readlinkSync(host), host);
    else if (info.isDirectory()) args.push("--ro-bind", host, host);
  }
  return args;
}

/**
 * bwrap's options for one call. They travel over a pipe (`--args`), so /proc/1/cmdline inside
 * shows no host path, only `bwrap --args 3 -- /bin/bash -c …` with the command; bwrap itself is
 * started with an empty environment, since /proc/1/environ inside is bwrap's own.
 */
export function buildBwrapOptions(limits: SandboxLimits): string[] {
  const etcArgs = Object.keys(ETC_FILES).flatMap((file, index) => [
    "--ro-bind-data",
    String(FIRST_DATA_FD + index),
    file,
  ]);
  return [
    ...(SECCOMP_FILTER ? ["--seccomp", String(SECCOMP_FD)] : []),
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--uid",
    String(SANDBOX_UID),
    "--gid",
    String(SANDBOX_UID),
    "--hostname",
    "sandbox",
    "--ro-bind",
    "/usr",
    "/usr",
    ...systemRootArgs(),
    "--dir",
    "/etc",
    ...ETC_FROM_HOST.flatMap((file) => ["--ro-bind-try", file, file]),
    ...etcArgs,
    "--proc",
    "/proc",
    // The keys the session keyring it inherits holds are listed here, with their descriptions,
    // even where the seccomp program refuses keyctl (red team): masked, as Docker masks them.
    ...PROC_KEY_FILES.flatMap((file) => ["--ro-bind-try", "/dev/null", file]),
    "--dev",
    "/dev",
    // bwrap's /dev and / are tmpfs without a size: bound /dev/shm and make the rest read-only, or
    // a command could fill the machine's memory through them.
    "--size",
    String(limits.tmpBytes),
    "--tmpfs",
    "/dev/shm",
    "--remount-ro",
    "/dev",
    "--size",
    String(limits.tmpBytes),
    "--tmpfs",
    "/tmp",
    "--bind-fd",
    String(WORKSPACE_FD),
    SANDBOX_WORKSPACE,
    "--remount-ro",
    "/",
    "--chdir",
    SANDBOX_WORKSPACE,
    "--clearenv",
    "--setenv",
    "PATH",
    SANDBOX_PATH,
    "--setenv",
    "HOME",
    SANDBOX_WORKSPACE,
    "--setenv",
    "PWD",
    SANDBOX_WORKSPACE,
    "--setenv",
    "TMPDIR",
    "/tmp",
    "--setenv",
    "LANG",
    "C.UTF-8",
    "--setenv",
    "USER",
    "agent",
  ];
}

/** What follows the options: bwrap wants its command on the command line itself. */
function sandboxCommand(command: string, limits: SandboxLimits): string[] {
  const kib = (bytes: number) => String(Math.floor(bytes / 1024));
  // Limits are set inside the new user namespace, by the sandbox's first shell: set before it,
  // RLIMIT_NPROC would also cap the namespace's parent count, i.e. every process of the host user.
  // Descriptors the worker inherited without close-on-exec (from whatever started it) pass
  // through bwrap; an open directory among them would be a way out, so all but stdio are closed.
  const closeInherited =
    'for fd in /proc/self/fd/*; do fd="${fd##*/}"; if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi; done';
  const prelude = [
    closeInherited,
    `ulimit -t ${limits.cpuSeconds}`,
    `ulimit -v ${kib(limits.memoryBytes)}`,
    `ulimit -u ${limits.processes}`,
    `ulimit -f ${kib(limits.fileBytes)}`,
    "ulimit -c 0",
    'exec /bin/bash -c "$1"',
  ].join(" && ");
  return ["--", "/bin/bash", "-c", prelude, "bash", command];
}

/** Keeps the first `limit` bytes of a stream but drains the rest, so the writer never blocks. */
function captureStream(stream: Readable, limit: number): () => string {
  const chunks: Buffer[] = [];
  let kept = 0;
  let isTruncated = false;
  stream.on("data", (chunk: Buffer) => {
    const room = limit - kept;
    if (chunk.length > room) isTruncated = true;
    if (room <= 0) return;
    const part = chunk.subarray(0, room);
    chunks.push(part);
    kept += part.length;
  });
  return () => Buffer.concat(chunks).toString("utf8") + (isTruncated ? "\n[truncated]" : "");
}

function feed(pipe: Writable, data: string | Buffer): void {
  // bwrap may exit before reading (a setup failure); its own error message tells the story.
  pipe.on("error", () => undefined);
  pipe.end(data);
}

/**
 * Runs `command` with /bin/bash inside a fresh bubblewrap sandbox whose only writable host path is
 * the workspace. The sandbox has its own pid namespace, so when its shell returns, or the call
 * times out and bwrap is killed (--die-with-parent takes its pid 1 along), every process the
 * command started dies with it: nothing outlives the call that was approved.
 */
export async function runSandboxed(
  command: string,
  options: { workspace: string; timeoutSeconds: number; settings: SandboxSettings },
): Promise<BashOutcome> {
  const { settings } = options;
  const bwrapOptions = buildBwrapOptions(settings.limits);
  // Opened here, by the worker, and handed over as an fd: bwrap then binds exactly this directory.
  const workspace = await open(options.workspace, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    return await new Promise<BashOutcome>((resolve, reject) => {
      const child = spawn(
        settings.bwrapPath,
        ["--args", String(ARGS_FD), ...sandboxCommand(command, settings.limits)],
        {
          env: {} as NodeJS.ProcessEnv,
          stdio: [
            "ignore",
            "pipe",
            "pipe",
            "pipe",
            workspace.fd,
            ...Object.keys(ETC_FILES).map(() => "pipe" as const),
            ...(SECCOMP_FILTER ? ["pipe" as const] : []),
          ],
          ...(settings.identity ? { uid: settings.identity.uid, gid: settings.identity.gid } : {}),
        },
      );
      const [, stdout, stderr, argsPipe, , ...dataPipes] = child.stdio;
      if (!stdout || !stderr || !argsPipe) throw new Error("bwrap's pipes are missing");
      feed(argsPipe as Writable, bwrapOptions.map((arg) => `${arg}\0`).join(""));
      Object.values(ETC_FILES).forEach((content, index) => {
        const pipe = dataPipes[index];
        if (pipe) feed(pipe as Writable, content);
      });
      const seccompPipe = dataPipes[Object.keys(ETC_FILES).length];
      if (SECCOMP_FILTER && seccompPipe) feed(seccompPipe as Writable, SECCOMP_FILTER);
      const readStdout = captureStream(stdout, MAX_STREAM_BYTES);
      const readStderr = captureStream(stderr, MAX_STREAM_BYTES);
      let isTimedOut = false;
      let graceTimer: NodeJS.Timeout | undefined;
      const timer = setTimeout(() => {
        isTimedOut = true;
        child.kill("SIGKILL");
        graceTimer = setTimeout(() => {
          stdout.destroy();
          stderr.destroy();
        }, PIPE_GRACE_MS);
      }, options.timeoutSeconds * 1000);
      const clearTimers = () => {
        clearTimeout(timer);
        clearTimeout(graceTimer);
      };
      child.on("error", (error) => {
        clearTimers();
        reject(error);
      });
      child.on("close", (exitCode, signal) => {
        clearTimers();
        resolve({ exitCode, signal, isTimedOut, stdout: readStdout(), stderr: readStderr() });
      });
    });
  } finally {
    await workspace.close();
  }
}

/**
 * Gives the workspace to the sandbox's host uid (when it differs from ours) and lets that uid
 * traverse the two folders above it, which bwrap must resolve as that uid. Only the execute bit
 * is added: the sandbox never sees those folders, and listing them stays refused.
 */
/**
 * Hands the workspace to the sandbox's uid, links not followed. GNU chown walks by descriptor: a
 * tree an earlier sandbox built deeper than PATH_MAX has no path `lchown` accepts, and a walk by
 * paths failed on it, leaving the respawned worker without bash.
 */
function chownTree(workspace: string, identity: HostIdentity): Promise<void> {
  return new Promise((resolve, reject) => {
    const owner = `${identity.uid}:${identity.gid}`;
    execFile("chown", ["-R", "-h", "-P", owner, "--", workspace], (error, _stdout, stderr) => {
      if (!error) return resolve();
      // The model may read this (the probe's reason): the workspace by its name in the sandbox.
      const said = stderr.split(workspace).join("/workspace").split("\n")[0]?.slice(0, 300);
      reject(
        new Error(`the workspace could not be handed to the sandbox: ${said || error.message}`),
      );
    });
  });
}

export async function prepareWorkspace(workspace: string, identity: HostIdentity | null) {
  if (!identity) return;
  await chownTree(workspace, identity);
  for (const folder of [path.dirname(workspace), path.dirname(path.dirname(workspace))]) {
    const info = await lstat(folder);
    if ((info.mode & 0o001) === 0) await chmod(folder, (info.mode & 0o7777) | 0o111);
  }
}

/**
 * Runs a trivial command in the sandbox once, at worker start: a missing bwrap, a kernel without
 * user namespaces or a workspace the sandbox uid cannot reach all show up here, as a reason the
 * Lead can act on, instead of as a failure of the model's first command.
 */
export async function probeSandbox(
  workspace: string,
  settings: SandboxSettings,
): Promise<SandboxState> {
  try {
    await prepareWorkspace(workspace, settings.identity);
    const outcome = await runSandboxed("test -w . && echo sandbox-ok", {
      workspace,
      timeoutSeconds: 15,
      settings,
    });
    if (outcome.exitCode === 0 && outcome.stdout.trim() === "sandbox-ok")
      return { status: "sandboxed", settings };
    return {
      status: "no_sandbox",
      workspaceQuotaBytes: settings.limits.workspaceQuotaBytes,
      reason: `bwrap could not start a sandbox (${outcome.stderr.trim() || `exit ${outcome.exitCode}`}); user namespaces must be enabled and the workspace reachable by uid ${settings.identity?.uid ?? "of the worker"}`,
    };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT")
      return {
        status: "no_sandbox",
        workspaceQuotaBytes: settings.limits.workspaceQuotaBytes,
        reason: `${settings.bwrapPath} not found; ${INSTALL_HINT}`,
      };
    return {
      status: "no_sandbox",
      workspaceQuotaBytes: settings.limits.workspaceQuotaBytes,
      reason: `the sandbox probe failed: ${(error as Error).message}`,
    };
  }
}

/** Each entry counts at least one block: empty files and symlinks take inodes, not blocks. */
const MIN_ENTRY_BYTES = 4096;

/**
 * What the workspace holds, as `bytes`; `problem` says why part of it could not be measured, and
 * then the caller counts it as over its quota.
 */
export type WorkspaceUsage = { bytes: number; problem: string | null };

/** Part of the workspace that could not be measured counts as over. */
export function isWithinQuota(usage: WorkspaceUsage, quota: number): boolean {
  return usage.problem === null && usage.bytes <= quota;
}

/**
 * Disk used by the workspace: each entry's allocated blocks, at least MIN_ENTRY_BYTES (so the
 * quota bounds inodes too), links not followed and a hard link counted at each of its names.
 * Counting stops once past `stopAbove`: the caller only needs to know whether the quota is
 * exceeded, and so a workspace of millions of entries costs one quota's worth of them to measure.
 *
 * GNU find walks the tree by descriptor, as no Node API can: a tree the sandbox built deeper than
 * PATH_MAX (`mkdir d && cd d`, twenty times) has no path a `readdir` accepts, and a walk by paths
 * counted nothing below it. A folder find cannot read (a worker that is not root, `chmod 000`) is
 * reported, never skipped.
 */
export function measureWorkspace(workspace: string, stopAbove: number): Promise<WorkspaceUsage> {
  return new Promise((resolve) => {
    const walk = spawn("find", ["-P", workspace, "-xdev", "-printf", "%b\\n"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let bytes = 0;
    let partial = "";
    let errors = "";
    let isStopped = false;
    walk.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) bytes += Math.max(Number(line) * 512, MIN_ENTRY_BYTES);
      if (bytes > stopAbove && !isStopped) {
        isStopped = true;
        walk.kill("SIGKILL");
      }
    });
    walk.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      if (errors.length < 1_000) errors += chunk;
    });
    walk.on("error", (error) =>
      resolve({ bytes, problem: `find could not run: ${error.message}` }),
    );
    walk.on("close", (code) => {
      if (isStopped || code === 0) return resolve({ bytes, problem: null });
      // The model sees this: the workspace by the name it knows, never the host's path.
      const said = errors.split(workspace).join("/workspace").split("\n")[0]?.slice(0, 300);
      resolve({ bytes, problem: said || `find exited with ${code}` });
    });
  });
}
