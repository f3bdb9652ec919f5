import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { TeamMember } from "@/lib/agents/views";
import { AgentCard } from "./agent-card";

const NOW = Date.parse("2026-11-30T12:00:00Z");

function member(overrides: Partial<TeamMember> = {}): TeamMember {
  return {
    name: "api-server-3f9a",
    role: "Claude Code session",
    prompt: null,
    status: "idle",
    gate: "not_required",
    workVersion: 0,
    taskId: null,
    incarnation: 1,
    lastHeartbeatAt: new Date(NOW - 20 * 60_000).toISOString(),
    toolHost: "external",
    requirePlan: false,
    isForcedStop: false,
    connector: null,
    worker: null,
    createdAt: new Date(NOW - 3_600_000).toISOString(),
    taskTitle: null,
    blockedToolCalls: 0,
    pendingRequests: [],
    ...overrides,
  };
}

const render = (value: TeamMember) =>
  renderToStaticMarkup(
    <AgentCard member={value} now={NOW} canAct={false} onAction={() => undefined} />,
  );

describe("AgentCard for a connected session", () => {
  it("shows the session's directory and model, and no stale-heartbeat warning", () => {
    const html = render(
      member({
        connector: {
          sessionId: "5f1c",
          agentId: null,
          agentType: null,
          cwd: "/home/ada/src/api-server",
          model: "claude-opus-4",
          parent: null,
          parentSessionId: null,
        },
      }),
    );
    expect(html).toContain('data-testid="agent-connector"');
    expect(html).toContain("/home/ada/src/api-server");
    expect(html).toContain("claude-opus-4");
    expect(html).not.toMatch(/font-medium text-amber-700"[^>]*>20m ago/);
  });

  it("shows no session line for a worker, whose silence is flagged", () => {
    const html = render(member({ toolHost: "sandboxed" }));
    expect(html).not.toContain("agent-connector");
    expect(html).toMatch(/font-medium text-amber-700"[^>]*>20m ago/);
  });
});
