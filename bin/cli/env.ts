import { homedir } from "node:os";
import path from "node:path";

// The CLI's only reader of the environment.

export function configDir(): string {
  return process.env.HANDSHAKE_CONFIG_DIR || path.join(homedir(), ".config", "handshake");
}

export function envToken(): string | undefined {
  return process.env.HANDSHAKE_TOKEN || undefined;
}

export function envAgentToken(): string | undefined {
  return process.env.HANDSHAKE_AGENT_TOKEN || undefined;
}

export function envUrl(): string | undefined {
  return process.env.HANDSHAKE_URL || undefined;
}

/** Claude Code's own settings folder, as Claude Code finds it. */
export function claudeConfigDir(): string {
  return process.env.CLAUDE_CONFIG_DIR || path.join(homedir(), ".claude");
}
