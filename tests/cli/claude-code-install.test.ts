import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { findHooksSwitchedOff, hookCommands } from "../../bin/cli/claude-code-install";
import { DOWN_URL, ensureCliBundle, newConfigDir, runCli } from "../support/handshake-cli";
import { makeTempDir } from "../support/temp-dirs";

const TOKEN = "hs_lead_connecttokenconnecttoken";

beforeAll(ensureCliBundle, 60_000);

async function project(settings?: unknown): Promise<string> {
  const dir = await makeTempDir("handshake-project-");
  if (settings !== undefined) {
    await mkdir(path.join(dir, ".claude"));
    await writeFile(path.join(dir, ".claude", "settings.json"), JSON.stringify(settings));
  }
  return dir;
}

function settingsOf(dir: string): Promise<Record<string, unknown>> {
  return readFile(path.join(dir, ".claude", "settings.json"), "utf8").then(
    (text) => JSON.parse(text) as Record<string, unknown>,
  );
}

async function install(dir: string, configDir: string, extra: string[] = []) {
  return runCli(
    ["claude-code", "install", "--url", DOWN_URL, "--token", TOKEN, "--dir", dir, ...extra],
    { env: { HANDSHAKE_CONFIG_DIR: configDir } },
  );
}

describe("handshake claude-code install", () => {
  it("adds every hook, keeps everything else, and works with the server down", async () => {
    const dir = await project({
      model: "opus",
      permissions: { allow: ["Bash(npm test)"] },
      hooks: {
        PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./lint.sh" }] }],
        Notification: [{ hooks: [{ type: "command", command: "notify-send hi" }] }],
      },
    });
    const configDir = await newConfigDir();
    const run = await install(dir, configDir);
    expect(run.code, run.stderr).toBe(0);

    const settings = await settingsOf(dir);
    expect(settings.model).toBe("opus");
    expect(settings.permissions).toEqual({ allow: ["Bash(npm test)"] });
    const hooks = settings.hooks as Record<string, { matcher?: string; hooks: unknown[] }[]>;
    expect(hooks.Notification).toEqual([
      { hooks: [{ type: "command", command: "notify-send hi" }] },
    ]);
    expect(hooks.PreToolUse?.[0]).toEqual({
      matcher: "Bash",
      hooks: [{ type: "command", command: "./lint.sh" }],
    });
    const { decision, status } = hookCommands(
      path.resolve(import.meta.dirname, "../../bin/handshake"),
      3_600,
    );
    expect(hooks.PreToolUse?.[1]).toEqual({ matcher: "*", hooks: [decision] });
    expect(hooks.PermissionRequest).toEqual([{ matcher: "ExitPlanMode", hooks: [decision] }]);
    for (const event of ["SessionStart", "Stop", "SubagentStop", "SessionEnd"]) {
      expect(hooks[event]).toEqual([{ hooks: [status] }]);
    }
    // The hook outwaits the CLI's own one-hour deadline, so the CLI's deny is what Claude Code sees.
    expect(decision.timeout).toBeGreaterThan(3_600);
    expect(decision.command).toContain("--timeout 3600");
  });

  it("changes nothing when run twice, and rewrites its own hooks in place for a new timeout", async () => {
    const dir = await project({
      hooks: { Stop: [{ hooks: [{ type: "command", command: "x" }] }] },
    });
    const configDir = await newConfigDir();
    await install(dir, configDir);
    const first = await readFile(path.join(dir, ".claude", "settings.json"), "utf8");
    const again = await install(dir, configDir);
    expect(again.stdout).toContain("hooks already in");
    expect(await readFile(path.join(dir, ".claude", "settings.json"), "utf8")).toBe(first);

    await install(dir, configDir, ["--timeout", "600"]);
    const hooks = (await settingsOf(dir)).hooks as Record<
      string,
      { hooks: { command: string }[] }[]
    >;
    expect(hooks.PreToolUse).toHaveLength(1);
    expect(hooks.PreToolUse?.[0]?.hooks[0]?.command).toContain("--timeout 600");
    expect(hooks.Stop).toHaveLength(2);
  });

  it("stores URL and token in the config directory, 0600, and never in settings.json", async () => {
    const dir = await project();
    const configDir = path.join(await newConfigDir(), "nested");
    await install(dir, configDir);
    const file = path.join(configDir, "config.json");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(configDir)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ url: DOWN_URL, token: TOKEN });
    const settingsText = await readFile(path.join(dir, ".claude", "settings.json"), "utf8");
    expect(settingsText).not.toContain(TOKEN);
    expect(settingsText).not.toContain("127.0.0.1:9");
  });

  it("reads the token from stdin with --token -, or from HANDSHAKE_TOKEN", async () => {
    const configDir = await newConfigDir();
    const fromStdin = await runCli(
      ["claude-code", "install", "--url", DOWN_URL, "--token", "-", "--dir", await project()],
      { input: `${TOKEN}\n`, env: { HANDSHAKE_CONFIG_DIR: configDir } },
    );
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(JSON.parse(await readFile(path.join(configDir, "config.json"), "utf8")).token).toBe(
      TOKEN,
    );

    const fromEnv = await runCli(
      ["claude-code", "install", "--url", DOWN_URL, "--dir", await project()],
      { env: { HANDSHAKE_CONFIG_DIR: configDir, HANDSHAKE_TOKEN: "hs_lead_fromenv" } },
    );
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(JSON.parse(await readFile(path.join(configDir, "config.json"), "utf8")).token).toBe(
      "hs_lead_fromenv",
    );
  });

  it("refuses without a token, with a bad URL, and leaves a broken settings.json alone", async () => {
    const configDir = await newConfigDir();
    const noToken = await runCli(
      ["claude-code", "install", "--url", DOWN_URL, "--dir", await project()],
      { env: { HANDSHAKE_CONFIG_DIR: configDir } },
    );
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toContain("connect token");

    const badUrl = await runCli(
      ["claude-code", "install", "--url", "file:///etc/passwd", "--token", TOKEN],
      { env: { HANDSHAKE_CONFIG_DIR: configDir } },
    );
    expect(badUrl.code).toBe(1);
    // Each call appends its route to the URL: after a query or a fragment no route is reached.
    for (const url of ["http://127.0.0.1:9/?token=x", "http://127.0.0.1:9/#x", "http://u:p@h:9"]) {
      const refused = await runCli(["claude-code", "install", "--url", url, "--token", TOKEN], {
        env: { HANDSHAKE_CONFIG_DIR: configDir },
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("the URL names the server only");
    }

    const dir = await project();
    await mkdir(path.join(dir, ".claude"));
    await writeFile(path.join(dir, ".claude", "settings.json"), "{ not json");
    const broken = await install(dir, configDir);
    expect(broken.code).toBe(1);
    expect(await readFile(path.join(dir, ".claude", "settings.json"), "utf8")).toBe("{ not json");
  });

  it("names the file it cannot use, exit 1: a settings.json that is a folder, a broken config", async () => {
    // Both were thrown on to the launcher, which said the bundle would not load: exit 2.
    const dir = await project();
    await mkdir(path.join(dir, ".claude", "settings.json"), { recursive: true });
    const folder = await install(dir, await newConfigDir());
    expect(folder.code).toBe(1);
    expect(folder.stderr).toContain(`cannot read ${path.join(dir, ".claude", "settings.json")}`);
    expect(folder.stderr).not.toContain("bundle");

    const configDir = await newConfigDir();
    await writeFile(path.join(configDir, "config.json"), "{bad");
    const check = await runCli(["claude-code", "check"], {
      env: { HANDSHAKE_CONFIG_DIR: configDir },
    });
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(`${path.join(configDir, "config.json")} is not JSON`);
    expect(check.stderr).not.toContain("bundle");
  });

  it("refuses a project where Claude Code is told to run no hook, naming the file: every call would go unjudged", async () => {
    // Red team: `{"disableAllHooks": true}` in a cloned project's settings stayed, install said
    // "hooks written", and Claude Code ran every tool call without asking.
    const userDir = await makeTempDir("handshake-claude-user-");
    const installIn = async (dir: string) =>
      runCli(["claude-code", "install", "--url", DOWN_URL, "--token", TOKEN, "--dir", dir], {
        env: { HANDSHAKE_CONFIG_DIR: await newConfigDir(), CLAUDE_CONFIG_DIR: userDir },
      });
    for (const [file, base] of [
      [".claude/settings.json", ""],
      [".claude/settings.local.json", ""],
      ["settings.json", userDir],
    ] as const) {
      const dir = await project({ model: "opus" });
      const where = path.join(base || dir, file);
      await writeFile(where, JSON.stringify({ disableAllHooks: true }));
      const run = await installIn(dir);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `${where} sets disableAllHooks: Claude Code would run no Handshake hook`,
      );
      if (file !== ".claude/settings.json") {
        expect(await settingsOf(dir)).toEqual({ model: "opus" });
      }
      await rm(where);
    }

    // The local settings override the project's; allowManagedHooksOnly counts only where an
    // organization manages it, and Claude Code ignores it in a project.
    const overridden = await project({ disableAllHooks: true });
    await writeFile(
      path.join(overridden, ".claude", "settings.local.json"),
      '{"disableAllHooks": false}',
    );
    expect((await installIn(overridden)).code).toBe(0);
    expect((await installIn(await project({ allowManagedHooksOnly: true }))).code).toBe(0);
  });

  it("finds the organization's managed settings that leave a project's hooks unrun", async () => {
    const dir = await project();
    const managedDir = await makeTempDir("handshake-claude-managed-");
    const sources = { managedDir, userDir: await makeTempDir("handshake-claude-user-") };
    expect(await findHooksSwitchedOff(dir, sources)).toBeNull();
    await mkdir(path.join(managedDir, "managed-settings.d"));
    const dropIn = path.join(managedDir, "managed-settings.d", "10-hooks.json");
    await writeFile(dropIn, '{"strictPluginOnlyCustomization": ["skills"]}');
    expect(await findHooksSwitchedOff(dir, sources)).toBeNull();
    for (const [settings, key] of [
      ['{"strictPluginOnlyCustomization": ["skills", "hooks"]}', "strictPluginOnlyCustomization"],
      ['{"allowManagedHooksOnly": true}', "allowManagedHooksOnly"],
      ['{"disableAllHooks": true}', "disableAllHooks"],
    ] as const) {
      await writeFile(dropIn, settings);
      expect(await findHooksSwitchedOff(dir, sources)).toMatch(
        `${dropIn} (the organization's managed settings) sets ${key}`,
      );
    }
  });

  it("refuses a .claude or settings.json that is a symbolic link, and leaves its target alone", async () => {
    // Red team: it wrote the hooks through the link into a file outside the project.
    const elsewhere = await makeTempDir("handshake-elsewhere-");
    await writeFile(path.join(elsewhere, "app.json"), '{"name":"app"}');
    const linkedFile = await project();
    await mkdir(path.join(linkedFile, ".claude"));
    await symlink(
      path.join(elsewhere, "app.json"),
      path.join(linkedFile, ".claude", "settings.json"),
    );
    const linkedDir = await project();
    await symlink(elsewhere, path.join(linkedDir, ".claude"));
    for (const dir of [linkedFile, linkedDir]) {
      const run = await install(dir, await newConfigDir());
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("is a symbolic link");
      expect(await readFile(path.join(elsewhere, "app.json"), "utf8")).toBe('{"name":"app"}');
      expect(existsSync(path.join(elsewhere, "settings.json"))).toBe(false);
    }
  });

  it("names node by its absolute path: a `node` in the project never stands in for the guard", async () => {
    // Red team: with PATH=":/usr/bin:/bin" the script's `env node` found the project's ./node,
    // which answered "allow" for every call.
    const dir = await project();
    const marker = path.join(dir, "impostor-ran");
    await writeFile(path.join(dir, "node"), `#!/bin/sh\ntouch '${marker}'\n`, { mode: 0o755 });
    const { decision } = hookCommands(path.resolve(import.meta.dirname, "../../bin/handshake"), 60);
    const run = spawnSync("sh", ["-c", decision.command], {
      cwd: dir,
      input: "{}",
      env: { ...process.env, PATH: ":/usr/bin:/bin", HANDSHAKE_CONFIG_DIR: await newConfigDir() },
    });
    expect(existsSync(marker)).toBe(false);
    expect(run.status).not.toBe(0);
  });

  it("wraps the decision hook so that a CLI that cannot run blocks the call (exit 2)", () => {
    const { decision, status } = hookCommands("/nonexistent/bin/handshake", 3_600);
    const blocked = spawnSync("sh", ["-c", decision.command], { input: "{}" });
    expect(blocked.status).toBe(2);
    expect(blocked.stderr.toString()).toContain("blocked");
    // A status hook must never keep a session from stopping: it exits 0 whatever happens.
    expect(spawnSync("sh", ["-c", status.command], { input: "{}" }).status).toBe(0);
  });
});
