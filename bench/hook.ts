import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { buildCli } from "../scripts/build-cli";
import { summarize, type LatencySummary } from "./stats";

const CLI_PATH = path.resolve(import.meta.dirname, "../bin/handshake");

/** One process start to exit, its stdin written and closed, as Claude Code runs a hook. */
function timeProcess(args: string[], input: string, env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ["pipe", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const elapsed = performance.now() - started;
      if (code !== 0) reject(new Error(`${args.join(" ")} exited ${code}`));
      else if (args[0] === CLI_PATH && !stdout.includes('"permissionDecision":"allow"')) {
        reject(new Error(`the hook did not allow the call: ${stdout}`));
      } else resolve(elapsed);
    });
    child.stdin.end(input);
  });
}

export type HookBench = { bareNode: LatencySummary; hook: LatencySummary; samples: number };

type HookOptions = { baseUrl: string; connectToken: string; samples: number; warmup?: number };

/**
 * The PreToolUse hook's round trip for a call the gate allows at once (`Read`), process start
 * included, against a bare `node -e ''` start in the same run, alternating so a noisy neighbour
 * hits both alike. The session's agent is connected by the warm-up, as after a session's first call.
 */
export async function measureHook(options: HookOptions): Promise<HookBench> {
  await buildCli({ ifStale: true });
  const configDir = mkdtempSync(path.join(os.tmpdir(), "handshake-bench-hook-"));
  try {
    return await measureHookIn(configDir, options);
  } finally {
    await rm(configDir, { recursive: true, force: true });
  }
}

async function measureHookIn(configDir: string, options: HookOptions): Promise<HookBench> {
  await writeFile(
    path.join(configDir, "config.json"),
    JSON.stringify({ url: options.baseUrl, token: options.connectToken }),
    { mode: 0o600 },
  );
  const env = { ...process.env, HANDSHAKE_CONFIG_DIR: configDir };
  const input = JSON.stringify({
    session_id: randomUUID(),
    transcript_path: "/tmp/bench.jsonl",
    cwd: os.tmpdir(),
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Read",
    tool_input: { file_path: path.join(os.tmpdir(), "bench.txt") },
    tool_use_id: "toolu_bench",
  });
  const hookArgs = [CLI_PATH, "claude-code", "hook"];
  const bareArgs = ["-e", ""];
  for (let index = 0; index < (options.warmup ?? 5); index++) {
    await timeProcess(hookArgs, input, env);
  }
  const bareNode: number[] = [];
  const hook: number[] = [];
  for (let index = 0; index < options.samples; index++) {
    bareNode.push(await timeProcess(bareArgs, "", env));
    hook.push(await timeProcess(hookArgs, input, env));
  }
  return { bareNode: summarize(bareNode), hook: summarize(hook), samples: options.samples };
}
