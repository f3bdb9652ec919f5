import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { startHealthProbe } from "../bench/handshake";

const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

/**
 * A health endpoint in a process of its own that answers after 50 ms, so a probe's call is nearly
 * always in flight: 200 until `/fail` is asked, then 503.
 */
async function startHealthServer(): Promise<string> {
  const child = spawn(
    process.execPath,
    [
      "-e",
      `let failing = false;
       require("node:http").createServer((request, response) => {
         if (request.url === "/fail") failing = true;
         setTimeout(() => response.writeHead(failing ? 503 : 200).end("{}"), 50);
       }).listen(0, "127.0.0.1", function () { console.log(this.address().port); });`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  children.push(child);
  const port = await new Promise<string>((resolve) =>
    child.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString().trim())),
  );
  return `http://127.0.0.1:${port}`;
}

function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("bench/health-probe.ts", () => {
  it("times the server from its own process: the bench's blocked event loop does not show", async () => {
    const url = await startHealthServer();
    const probe = await startHealthProbe(url, 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    blockEventLoop(400);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const samples = await probe.stop();
    expect(Math.max(...samples)).toBeLessThan(300);
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(45);
    expect(samples.length).toBeGreaterThan(8);
  });

  it("counts a failed answer as an infinitely slow one", async () => {
    const url = await startHealthServer();
    const probe = await startHealthProbe(url, 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await fetch(`${url}/fail`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const samples = await probe.stop();
    expect(samples.filter(Number.isFinite).length).toBeGreaterThan(0);
    expect(samples.at(-1)).toBe(Number.POSITIVE_INFINITY);
  });
});
