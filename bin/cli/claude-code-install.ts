import { randomBytes } from "node:crypto";
import { lstat, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { saveConnection, type Connection } from "./config";
import { claudeConfigDir } from "./env";

/** The hook's own deadline for a decision, unless `--timeout` says otherwise: one hour. */
export const DEFAULT_TIMEOUT_SECONDS = 3_600;
/** Claude Code must outwait the CLI, so the CLI's own deny (with its reason) is what it sees. */
const HOOK_TIMEOUT_MARGIN_SECONDS = 60;
/** Status hooks report and return; they never hold a session up. */
const STATUS_HOOK_TIMEOUT_SECONDS = 15;
/** How our entries are recognised on a second install (and by a user reading the file). */
const HOOK_SUBCOMMAND = "claude-code hook";

type HookCommand = { type: "command"; command: string; timeout: number };
type MatcherGroup = { matcher?: string; hooks: HookCommand[] };

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * The commands written into settings.json. A decision hook that cannot run (node missing or
 * moved, the CLI moved, a crash) exits 2, which Claude Code treats as a block: it fails closed. A
 * status hook that fails exits 0: a failing `Stop` hook with exit 2 would keep the session from
 * stopping.
 */
export function hookCommands(
  cliPath: string,
  timeoutSeconds: number,
  nodePath: string = process.execPath,
) {
  // Node by its absolute path, not the script's `env node`: Claude Code runs hooks in the project,
  // and with an empty or relative entry in PATH a `node` file there would stand in for the guard.
  const cli = `${shellQuote(nodePath)} ${shellQuote(cliPath)} ${HOOK_SUBCOMMAND}`;
  return {
    decision: {
      type: "command",
      command: `${cli} --timeout ${timeoutSeconds} || { echo "Handshake hook could not run: blocked" >&2; exit 2; }`,
      timeout: timeoutSeconds + HOOK_TIMEOUT_MARGIN_SECONDS,
    },
    status: {
      type: "command",
      command: `${cli} || true`,
      timeout: STATUS_HOOK_TIMEOUT_SECONDS,
    },
  } satisfies Record<string, HookCommand>;
}

function isOurs(hook: unknown): boolean {
  return (
    typeof hook === "object" &&
    hook !== null &&
    typeof (hook as { command?: unknown }).command === "string" &&
    (hook as { command: string }).command.includes(` ${HOOK_SUBCOMMAND}`)
  );
}

/**
 * One event's groups with our hook in place: in the group with the same matcher if there is one
 * (so a second install rewrites it where it stands), dropped from every other group.
 */
function mergeEvent(groups: unknown, wanted: MatcherGroup): unknown[] {
  const list = Array.isArray(groups) ? [...groups] : [];
  let placed = false;
  const merged = list.flatMap((group: unknown) => {
    if (
      typeof group !== "object" ||
      group === null ||
      !Array.isArray((group as MatcherGroup).hooks)
    )
      return [group];
    const { hooks, ...rest } = group as MatcherGroup & Record<string, unknown>;
    if (!hooks.some(isOurs)) return [group];
    const others = hooks.filter((hook) => !isOurs(hook));
    if (!placed && (group as MatcherGroup).matcher === wanted.matcher) {
      placed = true;
      return [{ ...rest, hooks: [...others, ...wanted.hooks] }];
    }
    return others.length > 0 ? [{ ...rest, hooks: others }] : [];
  });
  if (!placed) merged.push(wanted);
  return merged;
}

export function mergeSettings(
  settings: Record<string, unknown>,
  cliPath: string,
  timeoutSeconds: number,
): Record<string, unknown> {
  const { decision, status } = hookCommands(cliPath, timeoutSeconds);
  const hooks =
    typeof settings.hooks === "object" && settings.hooks !== null && !Array.isArray(settings.hooks)
      ? { ...(settings.hooks as Record<string, unknown>) }
      : {};
  const wanted: Record<string, MatcherGroup> = {
    PreToolUse: { matcher: "*", hooks: [decision] },
    PermissionRequest: { matcher: "ExitPlanMode", hooks: [decision] },
    SessionStart: { hooks: [status] },
    Stop: { hooks: [status] },
    SubagentStop: { hooks: [status] },
    SessionEnd: { hooks: [status] },
  };
  for (const [event, group] of Object.entries(wanted)) {
    hooks[event] = mergeEvent(hooks[event], group);
  }
  return { ...settings, hooks };
}

export class InstallError extends Error {}

/** Where Claude Code reads its settings, besides the project's. */
export type SettingsSources = {
  /** The organization's managed settings: managed-settings.json and managed-settings.d/*.json. */
  managedDir: string;
  /** The user's own: settings.json. */
  userDir: string;
};

function defaultSources(): SettingsSources {
  const managedDir =
    process.platform === "darwin"
      ? "/Library/Application Support/ClaudeCode"
      : process.platform === "win32"
        ? "C:\\ProgramData\\ClaudeCode"
        : "/etc/claude-code";
  return { managedDir, userDir: claudeConfigDir() };
}

/** A settings file as Claude Code would take it; one that is not there or not JSON sets nothing. */
async function readSettingsFile(file: string): Promise<Record<string, unknown> | null> {
  const parsed: unknown = await readFile(file, "utf8")
    .then((text) => JSON.parse(text) as unknown)
    .catch(() => null);
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : null;
}

async function managedSettingsFiles(managedDir: string): Promise<string[]> {
  const dropIns = path.join(managedDir, "managed-settings.d");
  const names = await readdir(dropIns).catch(() => [] as string[]);
  return [
    path.join(managedDir, "managed-settings.json"),
    ...names
      .filter((name) => name.endsWith(".json"))
      .sort()
      .map((name) => path.join(dropIns, name)),
  ];
}

/** What in the organization's settings leaves a project's hooks unrun, and why. */
function managedSwitch(settings: Record<string, unknown>): string | null {
  if (settings.disableAllHooks === true) return "disableAllHooks";
  if (settings.allowManagedHooksOnly === true) return "allowManagedHooksOnly";
  const strict = settings.strictPluginOnlyCustomization;
  if (strict === true || (Array.isArray(strict) && strict.includes("hooks"))) {
    return "strictPluginOnlyCustomization";
  }
  return null;
}

const UNJUDGED =
  "Claude Code would run no Handshake hook, and every tool call would go ahead unjudged";

/**
 * Where Claude Code is told to run none of the project's hooks: every tool call would go ahead
 * unjudged, with nothing to say so (a cloned repository can ship such settings). The organization's
 * managed settings can switch them off three ways; the user's, the project's and its local
 * settings by `disableAllHooks`, the later overriding the earlier (Claude Code 2.1's rules). Not
 * seen here: a `--settings` file, remote managed settings, safe or bare mode.
 */
export async function findHooksSwitchedOff(
  dir: string,
  sources: SettingsSources = defaultSources(),
): Promise<string | null> {
  for (const file of await managedSettingsFiles(sources.managedDir)) {
    const settings = await readSettingsFile(file);
    const key = settings && managedSwitch(settings);
    if (key) {
      return `${file} (the organization's managed settings) sets ${key}: ${UNJUDGED}; ask whoever manages them`;
    }
  }
  let switchedOffBy: string | null = null;
  const project = path.join(path.resolve(dir), ".claude");
  for (const file of [
    path.join(sources.userDir, "settings.json"),
    path.join(project, "settings.json"),
    path.join(project, "settings.local.json"),
  ]) {
    const settings = await readSettingsFile(file);
    if (settings && "disableAllHooks" in settings) {
      switchedOffBy = settings.disableAllHooks === true ? file : null;
    }
  }
  return switchedOffBy && `${switchedOffBy} sets disableAllHooks: ${UNJUDGED}; remove it`;
}

/**
 * The project's own `.claude` and settings.json, never a link's target: through a link the hooks
 * would be written into a file elsewhere, and the project left without them.
 */
async function refuseLinks(settingsFile: string): Promise<void> {
  for (const entry of [path.dirname(settingsFile), settingsFile]) {
    const info = await lstat(entry).catch(() => null);
    if (info?.isSymbolicLink()) {
      throw new InstallError(
        `${entry} is a symbolic link; Handshake writes its hooks into the project's own file (nothing was changed)`,
      );
    }
  }
}

/** Whole or not at all: a new file renamed over the old, so no reader sees half of it. */
async function replaceFile(file: string, text: string): Promise<void> {
  const temporary = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${randomBytes(6).toString("hex")}`,
  );
  const mode = (await stat(file).catch(() => null))?.mode ?? 0o666;
  await writeFile(temporary, text, { flag: "wx", mode: mode & 0o777 });
  await rename(temporary, file).catch(async (error: unknown) => {
    await rm(temporary, { force: true });
    throw error;
  });
}

async function readSettings(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new InstallError(
      `cannot read ${file} (${(error as Error).message}); nothing was changed`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InstallError(`${file} is not valid JSON; fix it first (nothing was changed)`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new InstallError(`${file} does not hold a JSON object; nothing was changed`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * Writes files only, so it works with the server down: the connection goes to the private config
 * directory, the hooks into the project's settings.json (everything else in it kept; a second run
 * with the same arguments changes nothing).
 */
export async function installClaudeCode(options: {
  connection: Connection;
  dir: string;
  cliPath: string;
  timeoutSeconds: number;
}): Promise<{ settingsFile: string; configFile: string; isChanged: boolean }> {
  const settingsFile = path.join(path.resolve(options.dir), ".claude", "settings.json");
  await refuseLinks(settingsFile);
  const settings = await readSettings(settingsFile);
  const switchedOff = await findHooksSwitchedOff(options.dir);
  if (switchedOff) throw new InstallError(`${switchedOff} (nothing was changed)`);
  const configFile = await saveConnection(options.connection);
  const before = JSON.stringify(settings, null, 2) + "\n";
  const after =
    JSON.stringify(mergeSettings(settings, options.cliPath, options.timeoutSeconds), null, 2) +
    "\n";
  const isChanged = before !== after;
  if (isChanged) {
    await mkdir(path.dirname(settingsFile), { recursive: true });
    await replaceFile(settingsFile, after);
  }
  return { settingsFile, configFile, isChanged };
}
