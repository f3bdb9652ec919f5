import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decideGate } from "../../lib/shared/protocol/gate";
import { classifyToolCall } from "../../lib/shared/protocol/tool-risk";
import type {
  ModelStep,
  ProtocolNotice,
  ToolCall,
  ToolResult,
  ToolSpec,
  TranscriptEntry,
} from "./model";
import { loadScript, parseScript, SCRIPTS_DIRECTORY, ScriptedModel } from "./scripted-model";

const TOOLS: ToolSpec[] = [
  "read_file",
  "write_file",
  "edit_file",
  "bash",
  "list_files",
  "send_message",
  "submit_plan",
  "ask_lead",
  "request_shutdown",
  "shutdown_response",
  "claim_task",
  "complete_task",
  "idle",
].map((name) => ({ name, description: name, inputSchema: { type: "object" } }));

/**
 * A stand-in for the worker loop: it records every step and answers tool calls the way the real
 * gate would (lib/shared/protocol/gate with the risk class from lib/shared/protocol/tool-risk),
 * and delivers the notices and messages a test hands it.
 */
class FakeWorker {
  readonly transcript: TranscriptEntry[] = [{ role: "user", content: "You are a test agent." }];
  gate = "required";
  private readonly approvedCommands = new Set<string>();
  private messageId = 0;
  private requestId = 0;

  constructor(private readonly model: ScriptedModel) {}

  async step(): Promise<ModelStep> {
    const step = await this.model.next({
      system: "test",
      transcript: this.transcript,
      tools: TOOLS,
    });
    this.transcript.push({ role: "assistant", text: step.text, toolCalls: step.toolCalls });
    if (step.toolCalls.length > 0) {
      const results = await Promise.all(step.toolCalls.map((call) => this.run(call)));
      this.transcript.push({ role: "tool", results });
    }
    return step;
  }

  /** Runs steps until the model idles (an `idle` call or no calls); returns the calls before it. */
  async runUntilIdle(): Promise<ToolCall[]> {
    const calls: ToolCall[] = [];
    for (let count = 0; count < 20; count++) {
      const step = await this.step();
      if (step.toolCalls.length === 0 || step.toolCalls.some((call) => call.name === "idle")) {
        return calls;
      }
      calls.push(...step.toolCalls);
    }
    throw new Error("the script never idled");
  }

  decidePlan(isApproved: boolean): void {
    this.gate = isApproved ? "approved" : "rejected";
    this.notify({
      kind: "plan_decided",
      requestId: this.nextRequestId(),
      isApproved,
      feedback: null,
    });
  }

  decideTool(command: string, isApproved: boolean): void {
    if (isApproved) this.approvedCommands.add(command);
    const notice: ProtocolNotice = {
      kind: "tool_approval_decided",
      requestId: this.nextRequestId(),
      isApproved,
      feedback: null,
    };
    this.notify(notice);
  }

  answerQuestion(answer: { option: string; label: string } | null): void {
    this.notify({
      kind: "question_answered",
      requestId: this.nextRequestId(),
      answer: answer && { ...answer, text: null },
      isDefault: false,
      feedback: answer ? null : "not mine to say",
    });
  }

  sendMessage(content: string): void {
    this.messageId++;
    const message = {
      id: this.messageId,
      from: "lead",
      to: "agent-under-test",
      type: "message",
      content,
      metadata: {},
      incarnation: 1,
      cancelledAt: null,
      createdAt: new Date(0).toISOString(),
    };
    this.transcript.push({ role: "user", content, messages: [message] });
  }

  result(call: ToolCall): ToolResult | undefined {
    for (const entry of this.transcript) {
      if (entry.role !== "tool") continue;
      const result = entry.results.find((candidate) => candidate.toolCallId === call.id);
      if (result) return result;
    }
    return undefined;
  }

  private notify(notice: ProtocolNotice): void {
    this.transcript.push({ role: "user", content: `notice: ${notice.kind}`, notices: [notice] });
  }

  private nextRequestId(): string {
    this.requestId++;
    return `req_${this.requestId}`;
  }

  private async run(call: ToolCall): Promise<ToolResult> {
    const base = { toolCallId: call.id, name: call.name };
    const verdict = decideGate(this.gate, call.name, await classifyToolCall(call.name, call.args));
    const command = typeof call.args.command === "string" ? call.args.command : "";
    if (!verdict.allowed && !("needsApproval" in verdict && this.approvedCommands.has(command))) {
      const content = "needsApproval" in verdict ? "needs approval" : verdict.reason;
      return { ...base, content, isError: true, code: verdict.code };
    }
    if (call.name === "submit_plan") this.gate = "pending";
    return { ...base, content: "ok", isError: false };
  }
}

function createWorker(scriptName: string): FakeWorker {
  return new FakeWorker(new ScriptedModel(loadScript(scriptName)));
}

function describeCalls(calls: readonly ToolCall[]): string[] {
  return calls.map((call) => call.name);
}

describe("script files", () => {
  it("loads every script in agents/scripts", () => {
    const names = readdirSync(SCRIPTS_DIRECTORY)
      .filter((file) => file.endsWith(".json"))
      .map((file) => file.slice(0, -".json".length));
    expect(names).toEqual(
      expect.arrayContaining([
        "careful-planner",
        "bold-refactorer",
        "read-only-auditor",
        "write-after-approval",
      ]),
    );
    for (const name of names) expect(loadScript(name).steps.length).toBeGreaterThan(0);
  });

  describe("a malformed script", () => {
    let directory: string;
    beforeAll(() => {
      directory = mkdtempSync(path.join(tmpdir(), "handshake-scripts-"));
    });
    afterAll(() => {
      rmSync(directory, { recursive: true, force: true });
    });

    function writeScript(name: string, content: unknown): string {
      const file = path.join(directory, `${name}.json`);
      writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
      return file;
    }

    it("names the file and the field that is wrong", () => {
      const file = writeScript("bad-await", {
        steps: [{ tool: "list_files", args: {} }, { await: "coffee" }],
      });
      expect(() => loadScript("bad-await", directory)).toThrow(file);
      expect(() => loadScript("bad-await", directory)).toThrow(/steps\[1\]\.await: Invalid option/);
    });

    it("rejects a step with no keyword, or two", () => {
      writeScript("ambiguous", { steps: [{ say: "hi", goto: "x" }, { wait: 3 }] });
      const error = captureError(() => loadScript("ambiguous", directory));
      expect(error.message).toMatch(/steps\[0\]: a step has exactly one of tool, say, await/);
      expect(error.message).toMatch(/steps\[1\]: a step has exactly one of/);
    });

    it("rejects unknown fields", () => {
      writeScript("extra-field", {
        steps: [{ tool: "bash", args: { command: "ls" }, retries: 3 }],
      });
      expect(() => loadScript("extra-field", directory)).toThrow(
        /steps\[0\]: Unrecognized key: "retries"/,
      );
    });

    it("rejects unknown and duplicate labels", () => {
      writeScript("bad-labels", {
        steps: [
          { label: "a" },
          { label: "a" },
          { if: "plan_approved", then: "nowhere" },
          { goto: "elsewhere" },
        ],
      });
      const error = captureError(() => loadScript("bad-labels", directory));
      expect(error.message).toMatch(/steps\[1\]\.label: duplicate label 'a'/);
      expect(error.message).toMatch(/steps\[2\]\.then: no label 'nowhere'/);
      expect(error.message).toMatch(/steps\[3\]\.goto: no label 'elsewhere'/);
    });

    it("rejects text that is not JSON, a missing file and a name that could leave the folder", () => {
      const file = writeScript("not-json", "{ steps: [");
      expect(() => loadScript("not-json", directory)).toThrow(`Invalid script ${file}: not JSON`);
      expect(() => loadScript("missing", directory)).toThrow(/Cannot read script .*missing\.json/);
      expect(() => loadScript("../careful-planner", directory)).toThrow(/Invalid script name/);
    });
  });
});

function captureError(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

describe("write-after-approval", () => {
  it("is blocked by the gate, plans, idles until decided, revises after a rejection, then writes", async () => {
    const worker = createWorker("write-after-approval");

    const [blockedWrite, plan, ...rest] = await worker.runUntilIdle();
    expect(blockedWrite).toMatchObject({ name: "write_file", args: { path: "hello.txt" } });
    expect(worker.result(blockedWrite!)?.code).toBe("PLAN_GATE_BLOCKED");
    expect(plan?.name).toBe("submit_plan");
    expect(rest).toEqual([]);

    // Nothing decided yet, and a chat message is not a decision: still idle.
    expect(describeCalls((await worker.step()).toolCalls)).toEqual(["idle"]);
    worker.sendMessage("how is it going?");
    expect(describeCalls((await worker.step()).toolCalls)).toEqual(["idle"]);

    worker.decidePlan(false);
    const revised = await worker.runUntilIdle();
    expect(describeCalls(revised)).toEqual(["submit_plan"]);
    expect(revised[0]?.args.plan).toMatch(/^revised: /);

    worker.decidePlan(true);
    const write = await worker.runUntilIdle();
    expect(write).toEqual([
      expect.objectContaining({
        name: "write_file",
        args: { path: "hello.txt", content: "hello" },
      }),
    ]);
    expect(worker.result(write[0]!)).toMatchObject({ isError: false });

    // The script is over: no tool calls, however often it is asked.
    expect((await worker.step()).toolCalls).toEqual([]);
    expect((await worker.step()).toolCalls).toEqual([]);
  });

  it("writes straight away when the first plan is approved", async () => {
    const worker = createWorker("write-after-approval");
    await worker.runUntilIdle();
    worker.decidePlan(true);
    expect(describeCalls(await worker.runUntilIdle())).toEqual(["write_file"]);
  });

  it("revises again after every rejection", async () => {
    const worker = createWorker("write-after-approval");
    await worker.runUntilIdle();
    worker.decidePlan(false);
    expect(describeCalls(await worker.runUntilIdle())).toEqual(["submit_plan"]);
    worker.decidePlan(false);
    expect(describeCalls(await worker.runUntilIdle())).toEqual(["submit_plan"]);
    worker.decidePlan(true);
    expect(describeCalls(await worker.runUntilIdle())).toEqual(["write_file"]);
  });

  it("gives every call a stable, unique id", async () => {
    const worker = createWorker("write-after-approval");
    await worker.runUntilIdle();
    worker.decidePlan(true);
    await worker.runUntilIdle();
    const ids = worker.transcript.flatMap((entry) =>
      entry.role === "assistant" ? entry.toolCalls.map((call) => call.id) : [],
    );
    expect(ids).toEqual(["call_0_1", "call_1_2", "call_2_3", "call_9_4"]);
  });

  it("keeps its place when the worker trims old entries off the transcript", async () => {
    const worker = createWorker("write-after-approval");
    await worker.runUntilIdle();
    for (let count = 0; count < 5; count++) worker.sendMessage(`chatter ${count}`);
    expect(describeCalls((await worker.step()).toolCalls)).toEqual(["idle"]);
    // What the worker does past its size limit: keep the prompt, drop the oldest entries.
    worker.transcript.splice(1, 6);
    worker.decidePlan(true);
    expect(describeCalls(await worker.runUntilIdle())).toEqual(["write_file"]);
  });
});

describe("careful-planner", () => {
  it("explains itself, submits a markdown plan and writes notes/summary.md once approved", async () => {
    const worker = createWorker("careful-planner");
    const first = await worker.step();
    expect(first.text).toMatch(/plan/);
    expect(first.toolCalls[0]?.name).toBe("submit_plan");
    expect(first.toolCalls[0]?.args.plan).toMatch(/^## Plan\n1\. Create notes\/summary\.md/);

    expect(await worker.runUntilIdle()).toEqual([]);
    worker.decidePlan(true);
    const calls = await worker.runUntilIdle();
    expect(calls).toEqual([
      expect.objectContaining({
        name: "write_file",
        args: expect.objectContaining({ path: "notes/summary.md" }),
      }),
    ]);
    expect(worker.result(calls[0]!)?.isError).toBe(false);
  });

  it("only waits when the plan is rejected", async () => {
    const worker = createWorker("careful-planner");
    await worker.runUntilIdle();
    worker.decidePlan(false);
    const step = await worker.step();
    expect(step.toolCalls).toEqual([]);
    worker.sendMessage("anything else?");
    expect((await worker.step()).toolCalls).toEqual([]);
  });
});

describe("bold-refactorer", () => {
  it("proposes rm -rf, revises after a rejection, then writes a two-file batch", async () => {
    const worker = createWorker("bold-refactorer");
    const [risky] = await worker.runUntilIdle();
    expect(risky?.name).toBe("submit_plan");
    expect(risky?.args.plan).toMatch(/rm -rf/);

    worker.decidePlan(false);
    const [safer] = await worker.runUntilIdle();
    expect(safer?.name).toBe("submit_plan");
    expect(safer?.args.plan).not.toMatch(/rm -rf/);

    worker.decidePlan(true);
    const writes = await worker.runUntilIdle();
    expect(writes.map((call) => call.args)).toEqual([
      expect.objectContaining({
        path: "src/refactor.md",
        batch: { id: "refactor", index: 1, total: 2 },
      }),
      expect.objectContaining({
        path: "src/refactor-checklist.md",
        batch: { id: "refactor", index: 2, total: 2 },
      }),
    ]);
    expect(writes.every((call) => worker.result(call)?.isError === false)).toBe(true);
    expect((await worker.step()).toolCalls).toEqual([]);
  });

  it("writes the batch at once when the risky plan is approved", async () => {
    const worker = createWorker("bold-refactorer");
    await worker.runUntilIdle();
    worker.decidePlan(true);
    expect(describeCalls(await worker.runUntilIdle())).toEqual(["write_file", "write_file"]);
  });
});

describe("read-only-auditor", () => {
  const PUSH = "git push origin main";

  async function runToBlockedPush(worker: FakeWorker): Promise<ToolCall[]> {
    worker.gate = "not_required";
    return worker.runUntilIdle();
  }

  it("reads, reports to the lead, and retries the push once it is approved", async () => {
    const worker = createWorker("read-only-auditor");
    const calls = await runToBlockedPush(worker);
    expect(describeCalls(calls)).toEqual(["list_files", "read_file", "send_message", "bash"]);
    expect(calls[2]?.args).toMatchObject({
      to: "lead",
      content: expect.stringMatching(/findings/i),
    });
    expect(calls[3]?.args).toEqual({ command: PUSH });
    expect(worker.result(calls[3]!)?.code).toBe("TOOL_APPROVAL_REQUIRED");
    expect(worker.transcript.at(-2)).toMatchObject({
      role: "assistant",
      text: expect.stringMatching(/approval/),
    });

    worker.decideTool(PUSH, true);
    const retry = await worker.runUntilIdle();
    expect(retry).toEqual([expect.objectContaining({ name: "bash", args: { command: PUSH } })]);
    expect(retry[0]?.id).not.toBe(calls[3]?.id);
    expect(worker.result(retry[0]!)?.isError).toBe(false);
    expect((await worker.step()).toolCalls).toEqual([]);
  });

  it("does not retry a denied push", async () => {
    const worker = createWorker("read-only-auditor");
    await runToBlockedPush(worker);
    worker.decideTool(PUSH, false);
    expect(await worker.runUntilIdle()).toEqual([]);
  });
});

describe("release-asker", () => {
  it("asks the Lead, waits for the answer, then writes the notes", async () => {
    const worker = createWorker("release-asker");
    worker.gate = "not_required";
    const calls = await worker.runUntilIdle();
    expect(describeCalls(calls)).toEqual(["list_files", "ask_lead"]);
    expect(calls[1]?.args).toMatchObject({
      options: [{ id: "staging" }, { id: "production" }],
      default: "staging",
    });
    // Nothing new: it keeps waiting.
    expect(await worker.runUntilIdle()).toEqual([]);

    worker.answerQuestion({ option: "production", label: "Production" });
    expect(describeCalls(await worker.runUntilIdle())).toEqual(["write_file", "send_message"]);
  });

  it("writes nothing when the question goes unanswered", async () => {
    const worker = createWorker("release-asker");
    worker.gate = "not_required";
    await worker.runUntilIdle();
    worker.answerQuestion(null);
    const calls = await worker.runUntilIdle();
    expect(describeCalls(calls)).toEqual(["send_message"]);
    expect(calls[0]?.args).toMatchObject({ content: expect.stringMatching(/No answer/) });
  });
});

describe("the interpreter", () => {
  it("needs a new event for each await", async () => {
    const script = parseScript(
      { steps: [{ await: "message" }, { await: "message" }, { tool: "list_files" }] },
      "two-awaits",
    );
    const worker = new FakeWorker(new ScriptedModel(script));
    expect(describeCalls((await worker.step()).toolCalls)).toEqual(["idle"]);
    worker.sendMessage("one");
    expect(describeCalls((await worker.step()).toolCalls)).toEqual(["idle"]);
    worker.sendMessage("two");
    expect(describeCalls((await worker.step()).toolCalls)).toEqual(["list_files"]);
  });

  it("branches on the last tool's result", async () => {
    const script = parseScript(
      {
        steps: [
          { tool: "write_file", args: { path: "x.txt", content: "x" } },
          { if: "last_tool_blocked", then: "blocked" },
          { tool: "list_files" },
          { label: "blocked" },
          { if: "last_tool_ok", else: "end" },
          { tool: "read_file", args: { path: "x.txt" } },
          { label: "end" },
        ],
      },
      "branches",
    );
    const blocked = new FakeWorker(new ScriptedModel(script));
    expect(describeCalls(await blocked.runUntilIdle())).toEqual(["write_file"]);

    const open = new FakeWorker(new ScriptedModel(script));
    open.gate = "not_required";
    expect(describeCalls(await open.runUntilIdle())).toEqual([
      "write_file",
      "list_files",
      "read_file",
    ]);
  });

  it("branches on a denied tool approval", async () => {
    const script = parseScript(
      {
        steps: [
          { await: "tool_decision" },
          { if: "tool_denied", then: "denied" },
          { tool: "list_files" },
          { label: "denied" },
        ],
      },
      "denied",
    );
    const denied = new FakeWorker(new ScriptedModel(script));
    denied.decideTool("ls", false);
    expect(await denied.runUntilIdle()).toEqual([]);

    const approved = new FakeWorker(new ScriptedModel(script));
    approved.decideTool("ls", true);
    expect(describeCalls(await approved.runUntilIdle())).toEqual(["list_files"]);
  });

  it("refuses a loop that never emits a call", async () => {
    const script = parseScript({ steps: [{ label: "spin" }, { goto: "spin" }] }, "spin");
    const model = new ScriptedModel(script);
    await expect(model.next({ system: "", transcript: [], tools: TOOLS })).rejects.toThrow(
      /script 'spin' loops through step 0/,
    );
  });

  it("refuses a tool the worker does not offer", async () => {
    const script = parseScript({ steps: [{ tool: "launch_rocket" }] }, "rocket");
    const model = new ScriptedModel(script);
    await expect(model.next({ system: "", transcript: [], tools: TOOLS })).rejects.toThrow(
      /step 0 calls 'launch_rocket', which this worker does not offer/,
    );
  });
});
