import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const CLEANUPS = path.resolve(import.meta.dirname, "../bench/cleanups.ts");

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "handshake-bench-cleanups-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/**
 * A bench-like process: two undos registered (the server, then its database), each taking 300 ms,
 * then it ends the way `ending` says, or on SIGTERM once it runs, sent `signals` times 150 ms
 * apart (a second Ctrl-C while it cleans up). Answers its exit code and the undos that ran.
 */
async function runBenchEndingWith(
  ending: string,
  signals = 1,
): Promise<{ code: number | null; ran: string }> {
  const script = path.join(dir, "bench.mts");
  const ran = path.join(dir, "ran.txt");
  await writeFile(
    script,
    `import { appendFileSync } from "node:fs";
     import { Cleanups } from ${JSON.stringify(CLEANUPS)};
     const cleanups = new Cleanups();
     cleanups.runOnProcessEnd(() => {});
     for (const name of ["drop database", "stop server"]) {
       cleanups.push({
         name,
         run: async () => {
           await new Promise((resolve) => setTimeout(resolve, 300));
           appendFileSync(${JSON.stringify(ran)}, name + "\\n");
         },
       });
     }
     ${ending}
     setInterval(() => {}, 1000);
     console.log("ready");`,
  );
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (ending === "") {
    child.stdout.once("data", () => {
      for (let sent = 0; sent < signals; sent++) {
        setTimeout(() => child.kill("SIGTERM"), sent * 150);
      }
    });
  }
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, ran: await readFile(ran, "utf8").catch(() => "") };
}

describe("the bench's cleanups", () => {
  it("run when a callback throws, so no server keeps the port", async () => {
    const ended = await runBenchEndingWith(`setTimeout(() => { throw new Error("boom"); });`);
    expect(ended).toEqual({ code: 1, ran: "stop server\ndrop database\n" });
  });

  it("run when a rejection is left unhandled", async () => {
    const ended = await runBenchEndingWith(`void Promise.reject(new Error("boom"));`);
    expect(ended).toEqual({ code: 1, ran: "stop server\ndrop database\n" });
  });

  it("run on SIGTERM", async () => {
    const ended = await runBenchEndingWith("");
    expect(ended).toEqual({ code: 130, ran: "stop server\ndrop database\n" });
  });

  it("run once when a second SIGTERM comes while they run", async () => {
    const ended = await runBenchEndingWith("", 2);
    expect(ended).toEqual({ code: 130, ran: "stop server\ndrop database\n" });
  });
});
