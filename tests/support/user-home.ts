import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * A user's machine for the red-team tests of a connected session, whose Bash runs unsandboxed: a
 * home directory holding a secret beside the session's directory (`<home>/api` unless named
 * otherwise, with `src/` and `README.md`), a `~/bin` first on PATH, and bash or zsh run there as
 * the user's shell runs it.
 */
export type UserHome = {
  home: string;
  /** The session's directory. */
  cwd: string;
  /** `<home>/bin`, first on the user's PATH. */
  bin: string;
  /** `@HOME@` in a command, replaced by the home directory's absolute path. */
  resolve(command: string): string;
  /** The command's output and errors, from `bash -c` in the session's directory. */
  runInBash(command: string): string;
  /** The same from `zsh -c` (zsh 5.9's defaults), the shell of a session on macOS. */
  runInZsh(command: string): string;
  /** README.md written again and PWNED removed, for a command that deletes or creates. */
  resetProject(): void;
  remove(): void;
};

export function makeUserHome(options: {
  prefix: string;
  secret: string;
  /** The user's environment beside HOME, OLDPWD and PATH (API keys, a database URL). */
  env: Record<string, string>;
  /** The session directory's name in the home directory; `api` unless given. */
  project?: string;
}): UserHome {
  const home = path.join(mkdtempSync(path.join(tmpdir(), options.prefix)), "home", "ada");
  const cwd = path.join(home, options.project ?? "api");
  const bin = path.join(home, "bin");
  mkdirSync(path.join(cwd, "src"), { recursive: true });
  mkdirSync(bin);
  writeFileSync(path.join(home, ".secret"), `${options.secret}\n`);
  const resolve = (command: string) => command.replaceAll("@HOME@", home);
  const resetProject = () => {
    writeFileSync(path.join(cwd, "README.md"), "hello\n");
    rmSync(path.join(cwd, "PWNED"), { force: true });
  };
  resetProject();
  const runIn = (shell: string, command: string): string => {
    const run = spawnSync(shell, ["-c", resolve(command)], {
      cwd,
      encoding: "utf8",
      timeout: 5_000,
      input: "",
      // After `cd ~/api && claude`, OLDPWD is the home directory.
      env: {
        PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
        HOME: home,
        OLDPWD: home,
        NODE_ENV: "test",
        ...options.env,
      },
    });
    // Not started (no zsh installed): a red-team test must not pass for want of its shell.
    if (run.status === null && run.signal === null) throw run.error;
    return `${run.stdout ?? ""}${run.stderr ?? ""}`;
  };
  return {
    home,
    cwd,
    bin,
    resolve,
    resetProject,
    runInBash: (command) => runIn("/bin/bash", command),
    runInZsh: (command) => runIn("/usr/bin/zsh", command),
    remove: () => rmSync(path.dirname(path.dirname(home)), { recursive: true, force: true }),
  };
}
