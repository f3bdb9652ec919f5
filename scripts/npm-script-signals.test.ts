import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { becomes, isAlive } from "../tests/support/processes";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");
const HOLD = path.join(ROOT, "tests/support/hold-before-main.mjs");
const scratch = mkdtempSync(path.join(tmpdir(), "handshake-npm-signals-"));
const held: number[] = [];
afterAll(() => {
  for (const pid of held) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Ended, as it should have.
    }
  }
  rmSync(scratch, { recursive: true, force: true });
});

describe("npm's scripts that run the product", () => {
  // `kill`, `docker stop` and process managers send SIGTERM to the process they started: npm.
  // npm passes it to the script's shell; a shell that does not pass it on would leave the product
  // running, its embedded database too, with nothing left to stop it.
  it.each(["start", "serve", "dev"])(
    "npm run %s hands SIGTERM to the Node process it runs",
    async (script) => {
      const pidFile = path.join(scratch, `${script}.pid`);
      const npm = spawn("npm", ["run", "--silent", script], {
        cwd: ROOT,
        env: {
          ...process.env,
          NODE_OPTIONS: `--import=${HOLD}`,
          HANDSHAKE_HELD_PID_FILE: pidFile,
        },
        stdio: "ignore",
      });
      expect(await becomes(() => existsSync(pidFile), 15_000)).toBe(true);
      const node = Number(readFileSync(pidFile, "utf8"));
      held.push(node);

      npm.kill("SIGTERM");
      expect(await becomes(() => !isAlive(node), 5_000)).toBe(true);
    },
    30_000,
  );
});
