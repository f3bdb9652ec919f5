import { access, readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError } from "../../lib/sdk/errors";
import { EDIT_UNUSABLE, GATE_UNAVAILABLE, TOOL_SPECS, TOOLS } from "./dispatch";
import { createHarness, type Harness } from "../../tests/support/agent-tools";

let harness: Harness;

beforeEach(async () => {
  harness = await createHarness();
});

afterEach(async () => {
  await harness.cleanup();
});

async function isPresent(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

describe("tool specs", () => {
  it("lists every tool with a JSON Schema generated from its zod schema", () => {
    expect(TOOL_SPECS.map((spec) => spec.name).sort()).toEqual([
      "ask_lead",
      "bash",
      "claim_task",
      "complete_task",
      "edit_file",
      "idle",
      "list_files",
      "read_file",
      "request_shutdown",
      "send_message",
      "shutdown_response",
      "submit_plan",
      "write_file",
    ]);
    for (const spec of TOOL_SPECS) {
      expect(spec.description.length).toBeGreaterThan(0);
      expect(spec.inputSchema).toMatchObject({ type: "object", additionalProperties: false });
      expect(spec.inputSchema).not.toHaveProperty("$schema");
    }
  });

  it("leaves defaulted and optional fields out of `required`", () => {
    expect(TOOLS.get("bash")?.spec.inputSchema.required).toEqual(["command"]);
    expect(TOOLS.get("write_file")?.spec.inputSchema.required).toEqual(["path", "content"]);
  });
});

describe("dispatchToolCall", () => {
  it("turns an unknown tool into an error result", async () => {
    const result = await harness.call("format_disk", {});
    expect(result).toMatchObject({ isError: true, name: "format_disk" });
    expect(result.content).toContain("unknown tool 'format_disk'");
  });

  it("does not find tools through the prototype chain", async () => {
    const result = await harness.call("constructor", {});
    expect(result.isError).toBe(true);
    expect(result.content).toContain("unknown tool");
  });

  it("names the bad field when arguments are invalid, and runs nothing", async () => {
    const result = await harness.call("write_file", { path: 42, content: "x" });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/invalid arguments for write_file: path: /);
    expect(harness.client.calls).toEqual([]);
  });

  it("rejects unexpected fields", async () => {
    const result = await harness.call("read_file", { path: "a", recursive: true });
    expect(result.isError).toBe(true);
    expect(result.content).toContain("recursive");
  });

  it("names nested fields", async () => {
    const result = await harness.call("write_file", {
      path: "a",
      content: "x",
      batch: { id: "b", index: 0, total: 2 },
    });
    expect(result.content).toContain("batch.index");
  });

  it("asks the server with the validated arguments before running the tool", async () => {
    const result = await harness.call("bash", { command: "echo hi" });
    expect(result.isError).toBe(false);
    expect(harness.client.callsTo("checkToolCall")).toEqual([
      {
        method: "checkToolCall",
        args: ["bash", { command: "echo hi", timeoutSeconds: 30 }, { canRunEdits: true }],
      },
    ]);
  });

  it("runs a call both verdicts allow", async () => {
    const result = await harness.call("write_file", { path: "notes.txt", content: "hello" });
    expect(result).toEqual({
      toolCallId: "call-1",
      name: "write_file",
      content: "wrote 5 bytes to notes.txt",
      isError: false,
    });
    expect(await readFile(path.join(harness.workspace, "notes.txt"), "utf8")).toBe("hello");
  });

  describe("the local plan gate", () => {
    it.each(["required", "pending", "rejected", "garbage"])(
      "blocks a mutating tool under gate %s, still asks the server, and runs nothing",
      async (gate) => {
        harness.gate.value = gate;
        const result = await harness.call("write_file", { path: "x.txt", content: "x" });
        expect(result).toMatchObject({ isError: true, code: "PLAN_GATE_BLOCKED" });
        expect(result.content).toContain("write_file is blocked");
        expect(harness.client.callsTo("checkToolCall")).toHaveLength(1);
        expect(await isPresent(path.join(harness.workspace, "x.txt"))).toBe(false);
      },
    );

    it("blocks even when the server would allow", async () => {
      harness.gate.value = "pending";
      harness.client.verdict = { allowed: true };
      const result = await harness.call("bash", { command: "touch ran" });
      expect(result.code).toBe("PLAN_GATE_BLOCKED");
      expect(await isPresent(path.join(harness.workspace, "ran"))).toBe(false);
    });

    it("refuses mutating tools once the worker agreed to stop, even under an open gate", async () => {
      harness.stopping.value = true;
      harness.client.verdict = { allowed: true };
      const result = await harness.call("bash", { command: "touch ran" });
      expect(result.code).toBe("AGENT_STOPPING");
      expect(await isPresent(path.join(harness.workspace, "ran"))).toBe(false);
      expect((await harness.call("list_files", {})).isError).toBe(false);
    });

    it("lets non-mutating tools through a closed gate", async () => {
      harness.gate.value = "required";
      const result = await harness.call("list_files", {});
      expect(result).toMatchObject({ isError: false, content: "(empty directory)" });
      expect(harness.client.callsTo("checkToolCall")).toHaveLength(1);
    });

    it("fails closed when the gate cannot be read", async () => {
      harness.context.getGate = () => {
        throw new Error("state file unreadable");
      };
      const result = await harness.call("write_file", { path: "x.txt", content: "x" });
      expect(result).toMatchObject({ isError: true, code: GATE_UNAVAILABLE });
      expect(await isPresent(path.join(harness.workspace, "x.txt"))).toBe(false);
    });
  });

  describe("the risk class, judged locally by the same code as the server", () => {
    it("runs read-only bash under a closed plan gate", async () => {
      harness.gate.value = "required";
      const result = await harness.call("bash", { command: "ls -la && pwd" });
      expect(result.isError, result.content).toBe(false);
    });

    it("still blocks workspace bash under a closed plan gate", async () => {
      harness.gate.value = "required";
      const result = await harness.call("bash", { command: "touch ran" });
      expect(result.code).toBe("PLAN_GATE_BLOCKED");
      expect(await isPresent(path.join(harness.workspace, "ran"))).toBe(false);
    });

    it("refuses a path outside the workspace even when the server would allow it", async () => {
      harness.gate.value = "approved";
      harness.client.verdict = { allowed: true };
      const result = await harness.call("bash", { command: "touch ran; cat /etc/hostname" });
      expect(result).toMatchObject({ isError: true, code: "PATH_OUTSIDE_WORKSPACE" });
      expect(result.content).toContain("/etc/hostname is outside the workspace");
      expect(await isPresent(path.join(harness.workspace, "ran"))).toBe(false);
    });

    it("runs a call that needs approval only when the server names the approval", async () => {
      harness.gate.value = "approved";
      harness.client.verdict = { allowed: true };
      const command = "touch ran; $(echo true)";
      const unnamed = await harness.call("bash", { command });
      expect(unnamed).toMatchObject({ isError: true, code: "TOOL_APPROVAL_REQUIRED" });
      expect(await isPresent(path.join(harness.workspace, "ran"))).toBe(false);

      harness.client.verdict = { allowed: true, requestId: "req-7" };
      expect((await harness.call("bash", { command })).isError).toBe(false);
      expect(await isPresent(path.join(harness.workspace, "ran"))).toBe(true);
    });
  });

  describe("the Lead's edited call", () => {
    it("runs the edited arguments the server names with the approval, and says so", async () => {
      harness.client.verdict = {
        allowed: true,
        requestId: "req-9",
        args: { command: "echo edited > out.txt" },
      };
      const result = await harness.call("bash", { command: "echo original > out.txt" });
      expect(result.isError, result.content).toBe(false);
      expect(result.content).toContain("The Lead edited this call");
      expect(result.content).toContain("the command: echo edited > out.txt");
      expect(await readFile(path.join(harness.workspace, "out.txt"), "utf8")).toBe("edited\n");
    });

    it("re-validates the edits with the tool's own schema", async () => {
      harness.client.verdict = { allowed: true, requestId: "req-9", args: { path: "x.txt" } };
      const result = await harness.call("bash", { command: "touch ran" });
      expect(result).toMatchObject({ isError: true, code: EDIT_UNUSABLE });
      expect(await isPresent(path.join(harness.workspace, "ran"))).toBe(false);
      expect(await isPresent(path.join(harness.workspace, "x.txt"))).toBe(false);
    });

    it("judges the edits by the local gate too", async () => {
      harness.client.verdict = {
        allowed: true,
        requestId: "req-9",
        args: { command: "touch ran; cat /etc/hostname" },
      };
      const result = await harness.call("bash", { command: "rm -rf build" });
      expect(result).toMatchObject({ isError: true, code: "PATH_OUTSIDE_WORKSPACE" });
      expect(await isPresent(path.join(harness.workspace, "ran"))).toBe(false);
    });

    it("refuses edits that come without the approval they belong to", async () => {
      harness.client.verdict = { allowed: true, args: { command: "touch ran" } };
      const result = await harness.call("bash", { command: "touch other" });
      expect(result).toMatchObject({ isError: true, code: EDIT_UNUSABLE });
      expect(await isPresent(path.join(harness.workspace, "ran"))).toBe(false);
      expect(await isPresent(path.join(harness.workspace, "other"))).toBe(false);
    });

    it("writes the edited content for write_file", async () => {
      harness.client.verdict = {
        allowed: true,
        requestId: "req-9",
        args: { path: "notes.txt", content: "the Lead's text" },
      };
      const result = await harness.call("write_file", { path: "notes.txt", content: "mine" });
      expect(result.isError, result.content).toBe(false);
      expect(result.content).toContain('"content":"the Lead\'s text"');
      expect(await readFile(path.join(harness.workspace, "notes.txt"), "utf8")).toBe(
        "the Lead's text",
      );
    });
  });

  describe("the server's verdict", () => {
    it.each([
      ["TOOL_APPROVAL_REQUIRED", "needs the Lead's approval: recursive forced delete (rm -rf)"],
      [
        "TOOL_APPROVAL_PENDING",
        "waiting for the Lead to approve: recursive forced delete (rm -rf)",
      ],
      ["TOOL_APPROVAL_DENIED", "the Lead did not approve this exact call (too broad)"],
      ["PLAN_GATE_BLOCKED", "bash is blocked: your plan is waiting for the Lead's approval"],
    ] as const)("%s blocks the call and never runs it", async (code, reason) => {
      harness.client.verdict = { allowed: false, code, reason, requestId: "req-42" };
      const result = await harness.call("bash", { command: "touch ran && rm -rf build" });
      expect(result).toMatchObject({ isError: true, code });
      expect(result.content).toContain(reason);
      expect(result.content).toContain("req-42");
      expect(await isPresent(path.join(harness.workspace, "ran"))).toBe(false);
    });

    it("blocks on anything but an explicit yes", async () => {
      harness.client.verdict = {} as never;
      const result = await harness.call("write_file", { path: "x.txt", content: "x" });
      expect(result.isError).toBe(true);
      expect(await isPresent(path.join(harness.workspace, "x.txt"))).toBe(false);
    });

    it("fails closed when the server cannot be reached", async () => {
      harness.client.verdict = new TypeError("fetch failed");
      const result = await harness.call("write_file", { path: "x.txt", content: "x" });
      expect(result).toMatchObject({ isError: true, code: GATE_UNAVAILABLE });
      expect(result.content).toContain("fetch failed");
      expect(await isPresent(path.join(harness.workspace, "x.txt"))).toBe(false);
    });

    it("fails closed when the server refuses to answer", async () => {
      harness.client.verdict = new ApiError(409, "STALE_INCARNATION", "this token has ended", {});
      const result = await harness.call("bash", { command: "touch ran" });
      expect(result).toMatchObject({ isError: true, code: GATE_UNAVAILABLE });
      expect(result.content).toContain("STALE_INCARNATION");
      expect(await isPresent(path.join(harness.workspace, "ran"))).toBe(false);
    });

    it("also gates tools that do not mutate", async () => {
      harness.client.verdict = { allowed: false, code: "TOOL_APPROVAL_DENIED", reason: "no" };
      const result = await harness.call("idle", {});
      expect(result.code).toBe("TOOL_APPROVAL_DENIED");
      expect(harness.idleCount.value).toBe(0);
    });
  });

  it("turns a handler's error into an error result", async () => {
    const result = await harness.call("read_file", { path: "missing.txt" });
    expect(result).toEqual({
      toolCallId: "call-1",
      name: "read_file",
      content: "missing.txt does not exist",
      isError: true,
    });
  });
});
