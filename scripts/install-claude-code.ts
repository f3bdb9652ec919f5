import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { env } from "../lib/env";

/**
 * Test fixtures too big for the product's dependencies, installed once into a cache outside the
 * repository: the real Claude Code CLI (~370 MB) that tests/connector drives. npm skips the
 * wrapper's postinstall, so the tests call the platform package's native binary directly.
 */
export const CLAUDE_CODE_VERSION = "2.1.328";

export function fixturesDir(): string {
  return env.HANDSHAKE_FIXTURES_DIR ?? path.join(homedir(), ".cache", "handshake-fixtures");
}

function claudeCodePrefix(): string {
  return path.join(fixturesDir(), `claude-code-${CLAUDE_CODE_VERSION}`);
}

export function claudeCodeBinary(): string {
  return path.join(
    claudeCodePrefix(),
    "node_modules",
    "@anthropic-ai",
    `claude-code-${process.platform}-${process.arch}`,
    "claude",
  );
}

export function installClaudeCode(): { binary: string; isInstalled: boolean } {
  const binary = claudeCodeBinary();
  if (existsSync(binary)) return { binary, isInstalled: false };
  mkdirSync(claudeCodePrefix(), { recursive: true });
  const result = spawnSync(
    "npm",
    [
      "install",
      "--prefix",
      claudeCodePrefix(),
      "--no-audit",
      "--no-fund",
      `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`,
    ],
    { stdio: "inherit" },
  );
  if (result.status !== 0 || !existsSync(binary)) {
    throw new Error(`could not install @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`);
  }
  return { binary, isInstalled: true };
}

if (import.meta.filename === process.argv[1]) {
  const { binary, isInstalled } = installClaudeCode();
  console.log(`${isInstalled ? "installed" : "already installed"}: ${binary}`);
}
