import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { readFile, stat, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_COMMAND_LENGTH } from "../../lib/shared/protocol/tool-args";
import {
  MAX_STREAM_BYTES,
  probeSandbox,
  runSandboxed,
  SANDBOX_UNAVAILABLE,
  WORKSPACE_OVER_QUOTA,
} from "./sandbox";
import { createHarness, testSandboxSettings, type Harness } from "../../tests/support/agent-tools";

const MIB = 1024 * 1024;
let harness: Harness | undefined;
let server: Server | undefined;

afterEach(async () => {
  await harness?.cleanup();
  harness = undefined;
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

async function sandboxed(overrides: Parameters<typeof testSandboxSettings>[0] = {}) {
  harness = await createHarness(overrides);
  // The machine must have a working sandbox for these tests to mean anything: fail, never skip.
  expect(harness.sandbox).toMatchObject({ status: "sandboxed" });
  return harness;
}

function run(command: string, timeoutSeconds = 30) {
  if (harness?.sandbox.status !== "sandboxed") throw new Error("no sandboxed harness");
  return runSandboxed(command, {
    workspace: harness.workspace,
    timeoutSeconds,
    settings: harness.sandbox.settings,
  });
}

/** Host processes (any namespace) whose command line contains `marker`, zombies excluded. */
function hostProcesses(marker: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return cmdline.includes(marker) && stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("bash in the sandbox", () => {
  it("returns the exit code, stdout and stderr", async () => {
    const { call } = await sandboxed();
    const result = await call("bash", { command: "echo out; echo err >&2; exit 3" });
    expect(result).toMatchObject({
      isError: false,
      content: "exit code 3\n--- stdout ---\nout\n\n--- stderr ---\nerr\n",
    });
  });

  it("runs in /workspace, which is HOME, as an unprivileged user; files land in the real workspace", async () => {
    const { workspace } = await sandboxed();
    const outcome = await run('pwd; echo "$HOME"; id -u; whoami; echo made > made.txt');
    expect(outcome.stdout).toBe("/workspace\n/workspace\n1000\nagent\n");
    expect(await readFile(path.join(workspace, "made.txt"), "utf8")).toBe("made\n");
  });

  it("has an allowlisted environment; sandbox pid 1 (bwrap) has an empty environment and no host path in its arguments", async () => {
    await sandboxed();
    process.env.HANDSHAKE_TEST_SECRET = "tools-test-secret-value";
    try {
      const outcome = await run(
        'env; echo ---; tr "\\0" " " < /proc/1/cmdline; echo; wc -c < /proc/1/environ; echo ---; cat /proc/*/environ | tr "\\0" "\\n"',
      );
      const [environment = "", pid1 = "", everyEnviron = ""] = outcome.stdout.split("---\n");
      const names = environment
        .trim()
        .split("\n")
        .map((line) => line.slice(0, line.indexOf("=")));
      expect(new Set(names)).toEqual(
        new Set(["PATH", "HOME", "PWD", "TMPDIR", "LANG", "USER", "SHLVL", "_"]),
      );
      expect(pid1).toMatch(/^\S*bwrap --args 3 -- \/bin\/bash -c .* bash env; echo ---;.*\n0\n$/s);
      expect(pid1).not.toContain(harness?.workspace);
      expect(outcome.stdout).not.toMatch(/tools-test-secret-value|HANDSHAKE_|DATABASE_URL/);
      expect(everyEnviron).not.toMatch(/tools-test-secret-value|HANDSHAKE_|DATABASE_URL/);
    } finally {
      delete process.env.HANDSHAKE_TEST_SECRET;
    }
  });

  it("sees the system read-only and nothing of the host beyond it", async () => {
    const { outside, workspace } = await sandboxed();
    await writeFile(path.join(outside, "secret.txt"), "outside secret");
    const thisFile = path.resolve(import.meta.dirname, "bash-tool.test.ts");
    const outcome = await run(
      [
        "ls /",
        "ls /etc",
        `cat ${thisFile} ${outside}/secret.txt ${workspace}/../outside/secret.txt /etc/shadow`,
        "ls /root /home /work /proc/1/root/root",
        "touch /usr/x /etc/x /x /dev/x",
        "echo private > /tmp/private-tmp-marker && cat /tmp/private-tmp-marker",
        "unshare --user true 2>/dev/null || echo no-nested-userns",
      ].join("; "),
    );
    const listing = outcome.stdout.split("\n");
    expect(listing.slice(0, listing.indexOf("alternatives"))).toEqual(
      expect.arrayContaining(["bin", "dev", "etc", "proc", "tmp", "usr", "workspace"]),
    );
    expect(outcome.stdout).not.toMatch(/outside secret|describe\("bash in the sandbox"/);
    expect(outcome.stderr).toMatch(/\/etc\/shadow: No such file or directory/);
    for (const hidden of ["/root", "/home", "/work", "/proc/1/root/root"])
      expect(outcome.stderr).toContain(`ls: cannot access '${hidden}': No such file or directory`);
    expect(outcome.stderr.match(/Read-only file system/g)).toHaveLength(4);
    expect(outcome.stdout).toContain("private\n");
    expect(outcome.stdout).toContain("no-nested-userns\n");
    await expect(stat("/tmp/private-tmp-marker")).rejects.toThrow();
    expect(listing).not.toContain("shadow");
  });

  it("has no network: a listening loopback port cannot be reached", async () => {
    await sandboxed();
    let connections = 0;
    server = createServer((socket) => {
      connections += 1;
      socket.end();
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const outcome = await run(
      `(exec 3<>/dev/tcp/127.0.0.1/${port}) && echo connected || echo refused; curl -sS -m 3 http://127.0.0.1:${port}/ || echo curl-failed`,
    );
    expect(outcome.stdout).toBe("refused\ncurl-failed\n");
    expect(connections).toBe(0);
  });

  it("closes descriptors the worker inherited, so an open host folder is not a way out", async () => {
    const { outside, workspace } = await sandboxed();
    await writeFile(path.join(outside, "secret.txt"), "outside secret");
    // bash opens the folder on fd 30 without close-on-exec and becomes the process that runs a
    // sandboxed command, as a worker started by a careless parent would.
    const child = spawnSync(
      "/bin/bash",
      [
        "-c",
        'exec 30<"$1" && exec "$2" --import tsx tests/support/sandbox-with-inherited-fd.ts "$3"',
        "bash",
        outside,
        process.execPath,
        workspace,
      ],
      { cwd: path.resolve(import.meta.dirname, "../.."), encoding: "utf8", timeout: 30_000 },
    );
    const outcome = JSON.parse(child.stdout) as { stdout: string; stderr: string };
    expect(outcome.stdout.split("\n").filter(Boolean).sort()).toEqual(["0", "1", "2", "3"]);
    expect(`${outcome.stdout}${outcome.stderr}`).not.toContain("outside secret");
    expect(outcome.stderr).toContain("/proc/self/fd/30/");
  });

  it("cannot make a hard link to a file outside the workspace", async () => {
    const { workspace } = await sandboxed();
    const outcome = await run("ln /usr/bin/env ./env-link; ln /etc/passwd ./passwd-link; ls");
    expect(outcome.stderr).toMatch(/env-link.*Invalid cross-device link/);
    expect(outcome.stdout).toBe("");
    expect(readdirSync(workspace)).toEqual([]);
  });

  it("files made in the sandbox stay usable by the worker's tools, and the worker's by the sandbox", async () => {
    const { call } = await sandboxed();
    await run("mkdir -p src && echo from-bash > src/a.txt");
    expect((await call("read_file", { path: "src/a.txt" })).content).toBe("from-bash\n");
    expect(
      (await call("edit_file", { path: "src/a.txt", oldText: "bash", newText: "tool" })).isError,
    ).toBe(false);
    await call("write_file", { path: "src/b/c.txt", content: "from-tool" });
    const outcome = await run(
      "echo more >> src/a.txt && echo more >> src/b/c.txt && cat src/*.txt src/b/c.txt",
    );
    expect(outcome).toMatchObject({ exitCode: 0, stdout: "from-tool\nmore\nfrom-toolmore\n" });
  });
});

describe("nothing outlives the call", () => {
  it("kills setsid/nohup, double-forked and SIGTERM-ignoring processes when the command returns", async () => {
    await sandboxed();
    const outcome = await run(
      [
        "setsid nohup sleep 4242.11 > /dev/null 2>&1 &",
        "( (sleep 4242.12 &) & )",
        "bash -c 'trap \"\" TERM HUP; exec sleep 4242.13' & disown",
        "sleep 0.3",
        "echo started",
      ].join("\n"),
    );
    expect(outcome).toMatchObject({ exitCode: 0, stdout: "started\n" });
    await expect.poll(() => hostProcesses("sleep 4242.1"), { timeout: 3_000 }).toEqual([]);
  });

  it("kills everything at the timeout, and says so", async () => {
    const { call, workspace } = await sandboxed();
    // A script, so the classifier (which asks the Lead about setsid) lets the call reach the sandbox.
    writeFileSync(
      path.join(workspace, "linger.sh"),
      "setsid sleep 4242.21 & trap '' TERM; echo begun; sleep 4242.22\n",
    );
    const started = Date.now();
    const result = await call("bash", { command: "bash linger.sh", timeoutSeconds: 1 });
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(result.content).toBe(
      "timed out after 1s; the sandbox and every process in it were killed\n--- stdout ---\nbegun\n",
    );
    await expect.poll(() => hostProcesses("sleep 4242.2"), { timeout: 3_000 }).toEqual([]);
  });

  it("caps output that never ends and stops it at the timeout", async () => {
    await sandboxed();
    const outcome = await run("yes; echo never", 2);
    expect(outcome.isTimedOut).toBe(true);
    expect(outcome.stdout).toBe(`${"y\n".repeat(MAX_STREAM_BYTES / 2)}\n[truncated]`);
  });

  it("holds a fork bomb to the process limit, even when the worker is root", async () => {
    await sandboxed({ limits: { processes: 32 } });
    const started = Date.now();
    const bomb = await run("bomb() { bomb | bomb & }; bomb", 5);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(bomb.exitCode === 0 || bomb.isTimedOut).toBe(true);
    const counted = await run(
      "for i in $(seq 1 100); do sleep 4242.31 & done 2>/dev/null; ls /proc | grep -c '^[0-9]'",
      10,
    );
    expect(Number(counted.stdout.trim())).toBeLessThanOrEqual(32);
    await expect.poll(() => hostProcesses("sleep 4242.31"), { timeout: 3_000 }).toEqual([]);
  });
});

describe("limits", () => {
  it("stops a process at its CPU time", async () => {
    await sandboxed({ limits: { cpuSeconds: 1 } });
    const outcome = await run("while :; do :; done", 30);
    expect(outcome.isTimedOut).toBe(false);
    expect(outcome.exitCode).not.toBe(0);
  });

  it("refuses memory past the address-space limit", async () => {
    await sandboxed({ limits: { memoryBytes: 64 * MIB } });
    const outcome = await run('x=$(head -c 200000000 /dev/zero | tr "\\0" a); echo "${#x}"');
    expect(outcome.stdout).not.toBe("200000000\n");
    expect(outcome.stderr).toMatch(/cannot allocate|memory/i);
  });

  it("caps a single file's size, /tmp and /dev/shm", async () => {
    const { workspace } = await sandboxed({ limits: { fileBytes: MIB, tmpBytes: MIB } });
    const outcome = await run(
      "head -c 3000000 /dev/zero > big; echo $?; head -c 800000 /dev/zero > /tmp/a; head -c 800000 /dev/zero > /tmp/b; echo $?; head -c 2000000 /dev/zero > /dev/shm/c; echo $?",
    );
    expect(outcome.stdout).not.toMatch(/^0\n/);
    expect((await stat(path.join(workspace, "big"))).size).toBeLessThanOrEqual(MIB);
    expect(outcome.stdout.split("\n").slice(1, 3)).not.toContain("0");
  });

  it("reserves no disk it does not write: fallocate, which RLIMIT_FSIZE does not hold, is refused", async () => {
    // Red team: `fallocate -n -l 3G` reserved 3 GiB past the file-size limit, even over quota
    // with writes "disabled": one call could fill the disk the database lives on.
    const { workspace } = await sandboxed({ limits: { fileBytes: MIB } });
    const outcome = await run(
      ": > kept; fallocate -n -l 64M kept; echo $?; fallocate -l 64M grown; echo $?; python3 -c 'import os; f = os.open(\"written\", os.O_CREAT | os.O_WRONLY); os.posix_fallocate(f, 0, 4096); print(os.fstat(f).st_size)'",
    );
    const [keepSize, grow, fallback] = outcome.stdout.split("\n");
    expect(keepSize).not.toBe("0");
    expect(grow).not.toBe("0");
    expect(outcome.stderr).toContain("Operation not supported");
    // posix_fallocate falls back to writing, which the file-size limit holds.
    expect(fallback).toBe("4096");
    const allocated = (await stat(path.join(workspace, "kept"))).blocks * 512;
    expect(allocated).toBeLessThanOrEqual(MIB);
  });

  it("reserves no disk through the ioctls that call fallocate either", async () => {
    // Red team: FS_IOC_RESVSP64 reserved 32 MiB in a call that ran with writes disabled.
    const { workspace } = await sandboxed({ limits: { fileBytes: MIB } });
    const reserve = (command: number) =>
      `python3 -c 'import os, fcntl, struct; fd = os.open("r${command}", os.O_CREAT | os.O_RDWR); fcntl.ioctl(fd, ${command}, struct.pack("=hh4xqqiI4i", 0, 0, 0, 8 << 20, 0, 0, 0, 0, 0, 0))'; echo $?`;
    const commands = [0x40305828, 0x4030582a, 0x40305839];
    const outcome = await run(commands.map(reserve).join("; "));
    expect(outcome.stdout.split("\n").filter(Boolean)).toEqual(["1", "1", "1"]);
    for (const command of commands) {
      const allocated = (await stat(path.join(workspace, `r${command}`))).blocks * 512;
      expect(allocated).toBeLessThanOrEqual(MIB);
    }
  });

  it("reaches no kernel keyring: add_key, request_key and keyctl are refused", async () => {
    // Red team: bwrap left the command in the server's session keyring, whose keys it listed,
    // read and cleared (KEYCTL_READ, KEYCTL_CLEAR) as the sandbox's uid.
    await sandboxed();
    const outcome = await run(
      `python3 -c 'import ctypes, platform
add_key, request_key, keyctl = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
for number, args in ((keyctl, (0, -3, 0)), (add_key, (b"user", b"k", b"v", 1, -3)), (request_key, (b"user", b"k", None, -3))):
    print(libc.syscall(number, *args), ctypes.get_errno())'`,
    );
    expect(outcome.stdout.trim().split("\n"), outcome.stderr).toEqual(["-1 38", "-1 38", "-1 38"]);
  });

  it("lists no key of the keyrings it inherits: /proc/keys and /proc/key-users are masked", async () => {
    // Red team: with keyctl refused, /proc/keys still listed each key it could view, its
    // description included ("ssh-passphrase:prod-db"), running as the worker's own uid.
    const { sandbox, workspace } = await sandboxed();
    if (sandbox.status !== "sandboxed") throw new Error("no sandbox");
    const description = `handshake-test-${process.pid}`;
    const keyctl = (python: string) =>
      spawnSync("python3", ["-c", `import ctypes\nlibc = ctypes.CDLL(None)\n${python}`], {
        encoding: "utf8",
      });
    // The user keyring (-4) of this uid, which the sandbox's process possesses when it runs as it.
    const added = keyctl(`print(libc.syscall(248, b"user", b"${description}", b"secret", 6, -4))`);
    const keyId = Number(added.stdout.trim());
    expect(keyId, added.stderr).toBeGreaterThan(0);
    try {
      const outcome = await runSandboxed("cat /proc/keys /proc/key-users; echo end", {
        workspace,
        timeoutSeconds: 30,
        settings: { ...sandbox.settings, identity: null },
      });
      expect(outcome.stdout, outcome.stderr).toBe("end\n");
    } finally {
      keyctl(`libc.syscall(250, 21, ${keyId})`);
    }
  });

  it("reports a call that pushed the workspace over its quota, then runs with writes disabled until files are removed", async () => {
    const { call } = await sandboxed({ limits: { workspaceQuotaBytes: MIB } });
    const over = await call("bash", { command: "head -c 2000000 /dev/zero > big" });
    expect(over.content).toContain(`--- workspace (${WORKSPACE_OVER_QUOTA}) ---`);
    expect(over.content).toContain("this call pushed the workspace over its quota");
    const refused = await call("bash", { command: "echo x > small && echo wrote" });
    expect(refused.content).not.toContain("wrote");
    expect(refused.content).toContain("ran with writes disabled");
    const freed = await call("bash", { command: "rm big && echo removed" });
    expect(freed.content).toContain("removed");
    expect(freed.content).not.toContain(WORKSPACE_OVER_QUOTA);
    expect((await call("bash", { command: "echo x > small && echo wrote" })).content).toContain(
      "wrote",
    );
  });
});

describe("without a sandbox", () => {
  it("the probe names the fix, and bash is refused with SANDBOX_UNAVAILABLE before the gate is asked", async () => {
    harness = await createHarness({ bwrapPath: "/nonexistent/bwrap" });
    expect(harness.sandbox).toMatchObject({
      status: "no_sandbox",
      reason: "/nonexistent/bwrap not found; install bubblewrap: apt-get install bubblewrap",
    });
    const result = await harness.call("bash", { command: "echo should-not-run > ran.txt" });
    expect(result).toMatchObject({ isError: true, code: SANDBOX_UNAVAILABLE });
    expect(result.content).toContain("apt-get install bubblewrap");
    expect(harness.client.callsTo("checkToolCall")).toEqual([]);
    expect(readdirSync(harness.workspace)).toEqual([]);
  });

  it("a bwrap that cannot build the sandbox is no sandbox either", async () => {
    harness = await createHarness();
    const broken = await probeSandbox(
      harness.workspace,
      testSandboxSettings({ bwrapPath: "/bin/false" }),
    );
    expect(broken).toMatchObject({ status: "no_sandbox" });
  });
});

describe("arguments", () => {
  it.each([
    [{ command: "" }, "command"],
    [{ command: "x".repeat(MAX_COMMAND_LENGTH + 1) }, "command"],
    [{ command: "true", timeoutSeconds: 0 }, "timeoutSeconds"],
    [{ command: "true", timeoutSeconds: 121 }, "timeoutSeconds"],
  ])("refuses invalid arguments %#", async (args, field) => {
    harness = await createHarness();
    const result = await harness.call("bash", args);
    expect(result.isError).toBe(true);
    expect(result.content).toContain(`${field}: `);
    expect(harness.client.calls).toEqual([]);
  });
});
