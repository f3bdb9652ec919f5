import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { classifyConnectorCall } from "../../lib/protocol/connector-gate";
import { makeUserHome, type UserHome } from "../support/user-home";

/**
 * Red team, round five: the programs on READ_ONLY_COMMANDS again, Linux's and macOS's. Each command
 * was judged `read_only` with the session directory `home/ada/api` (so it ran at once, unsandboxed,
 * in a connected session), and file 5.44 and jq 1.6, run there, did what the comment says.
 *
 * 1. `file -z` (`-Z`, `--uncompress`) runs the decompressor a file's first bytes name (`lzip -cd`
 *    for `LZIP`, `zstd`, `lrzip`, `uncompress`), looked up on the user's PATH: here `~/bin/lzip`.
 * 2. jq's `modulemeta` loads a module from jq's search path, `~/.jq`, which `..` climbs out of; a
 *    syntax error prints the file's lines (`~/other/secret.jq` here). `import` and `include` were
 *    already refused.
 * 3. macOS's `file -M LIST` reads a colon-separated list of magic files, as `-m` does, and prints
 *    each line it cannot parse; only `-m` was denied. Linux's file has no -M, so it is not run here.
 *
 * Fixed: `-z`, `-Z`, `--uncompress`, `--uncompress-noreport` and `-M` are denied to file, and jq's
 * `modulemeta` needs the Lead as `import` does.
 */
const SECRET = "TOPSECRET-ada-round-five";
const JQ_SECRET = "password: hunter2-other-repo";

const RUNS_A_PROGRAM = [
  "file -z archive.lz",
  "file -bZ archive.lz",
  "file --uncompress archive.lz",
];
const READS_OUTSIDE = [`jq -n '"../other/secret"|modulemeta'`];
const MACOS_ONLY = ["file -M README.md:@HOME@/.secret README.md"];

let user: UserHome;

beforeAll(() => {
  user = makeUserHome({ prefix: "rt-round-five-", secret: SECRET, env: {} });
  writeFileSync(path.join(user.bin, "lzip"), "#!/bin/sh\n/usr/bin/touch PWNED\n");
  chmodSync(path.join(user.bin, "lzip"), 0o755);
  // lzip's header: "LZIP", version 1, a dictionary size.
  writeFileSync(path.join(user.cwd, "archive.lz"), Buffer.from("LZIP\x01\x0c\0\0\0\0", "latin1"));
  mkdirSync(path.join(user.home, ".jq"));
  mkdirSync(path.join(user.home, "other"));
  writeFileSync(path.join(user.home, "other", "secret.jq"), `${JQ_SECRET}\n`);
});

beforeEach(() => user.resetProject());

afterAll(() => user.remove());

describe("the read-only programs, round five (red team)", () => {
  it.each(RUNS_A_PROGRAM)("%j runs a decompressor from the user's PATH", (command) => {
    user.runInBash(command);
    expect(existsSync(path.join(user.cwd, "PWNED"))).toBe(true);
  });

  it.each(READS_OUTSIDE)("%j prints a file outside the directory", (command) => {
    expect(user.runInBash(command)).toContain(JQ_SECRET);
  });

  it.each([...RUNS_A_PROGRAM, ...READS_OUTSIDE, ...MACOS_ONLY])(
    "%j is not run at once",
    async (command) => {
      const risk = await classifyConnectorCall(
        "Bash",
        { command: user.resolve(command) },
        user.cwd,
      );
      expect(risk.class).not.toBe("read_only");
    },
  );

  it("file and jq still read at once", async () => {
    for (const command of ["file -b README.md", "jq -n '1+1'", "file -L README.md"]) {
      const risk = await classifyConnectorCall("Bash", { command }, user.cwd);
      expect(risk.class, command).toBe("read_only");
    }
  });
});
