import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { hashToolCall } from "../../lib/protocol/tool-approval";
import {
  api,
  createTask,
  createToken,
  lead,
  registerAgent,
  submitPlan,
  type TestAgent,
} from "./fixtures";

afterAll(() => getDb().$disconnect());

const ASKED = { tool: "bash", args: { command: "rm -rf build", timeoutSeconds: 30 } };
/** A retry of the asked-for call by a caller that runs the Lead's edits (our worker, the CLI). */
const ORIGINAL = { ...ASKED, canRunEdits: true };
const EDITED_ARGS = { command: "rm -rf build/cache", timeoutSeconds: 30 };

/** A risky call raised to the Lead; returns its request id. */
async function raise(agent: TestAgent, call: { tool: string; args: Record<string, unknown> }) {
  const asked = await api.toolCall(agent.headers, call);
  expect(asked.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
  return String(asked.json.requestId);
}

async function approveWith(requestId: string, fields: Record<string, unknown>) {
  return api.respond((await lead()).headers, requestId, {
    type: "tool_approval_response",
    approve: true,
    ...fields,
  });
}

describe("a tool approval with the Lead's edits", () => {
  it("stores the edits and their hash in the response; the payload keeps the original", async () => {
    const agent = await registerAgent();
    const requestId = await raise(agent, ASKED);
    const decided = await approveWith(requestId, { editedArgs: { command: EDITED_ARGS.command } });
    expect(decided.status).toBe(200);
    expect(decided.json).toMatchObject({
      status: "approved",
      payload: { tool: "bash", args: ASKED.args },
      // The tool's own defaults are filled in: the edited call is the one the worker will send.
      response: {
        editedArgs: EDITED_ARGS,
        approvedCallHash: hashToolCall("bash", EDITED_ARGS),
      },
    });
    // The agent reads the same edits from its answer message.
    const inbox = await api.inbox(agent.headers);
    const answer = (inbox.json.messages as { type: string; metadata: unknown }[]).find(
      (message) => message.type === "tool_approval_response",
    );
    expect(answer?.metadata).toMatchObject({ response: { editedArgs: EDITED_ARGS } });
  });

  it("the original call's retry is told to run the edits, once, and the record shows what ran", async () => {
    const agent = await registerAgent();
    const requestId = await raise(agent, ASKED);
    await approveWith(requestId, { editedArgs: EDITED_ARGS });

    const retry = await api.toolCall(agent.headers, ORIGINAL);
    expect(retry.json).toEqual({ allowed: true, requestId, args: EDITED_ARGS });
    const recorded = await getDb().toolCall.findFirst({
      where: { requestId, isAllowed: true },
    });
    expect(recorded?.args).toEqual(EDITED_ARGS);

    // Used once: neither the original nor the edited call runs on it again.
    const second = await api.toolCall(agent.headers, ORIGINAL);
    expect(second.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
    expect(second.json.requestId).not.toBe(requestId);
    const edited = await api.toolCall(agent.headers, { tool: "bash", args: EDITED_ARGS });
    expect(edited.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
    expect(edited.json.requestId).not.toBe(requestId);
  });

  it("a caller that does not say it runs edits is refused on the original, and the approval stays for the edited call", async () => {
    const agent = await registerAgent();
    const requestId = await raise(agent, ASKED);
    await approveWith(requestId, { editedArgs: EDITED_ARGS });
    for (const stale of [ASKED, { ...ASKED, canRunEdits: false }]) {
      const refused = await api.toolCall(agent.headers, stale);
      expect(refused.json).toMatchObject({
        allowed: false,
        code: "TOOL_APPROVAL_DENIED",
        requestId,
      });
      expect(refused.json.reason).toContain(JSON.stringify(EDITED_ARGS));
    }
    expect((await api.toolCall(agent.headers, { tool: "bash", args: EDITED_ARGS })).json).toEqual({
      allowed: true,
      requestId,
    });
  });

  it("a call with exactly the edited arguments uses the approval, once, and voids the original's retry", async () => {
    const agent = await registerAgent();
    const requestId = await raise(agent, ASKED);
    await approveWith(requestId, { editedArgs: EDITED_ARGS });

    const edited = await api.toolCall(agent.headers, { tool: "bash", args: EDITED_ARGS });
    expect(edited.json).toEqual({ allowed: true, requestId });
    const again = await api.toolCall(agent.headers, { tool: "bash", args: EDITED_ARGS });
    expect(again.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
    const original = await api.toolCall(agent.headers, ORIGINAL);
    expect(original.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
    expect(original.json.requestId).not.toBe(requestId);
  });

  it("racing the original's retry against the edited call: exactly one runs", async () => {
    const agent = await registerAgent();
    const requestId = await raise(agent, ASKED);
    await approveWith(requestId, { editedArgs: EDITED_ARGS });
    const verdicts = await Promise.all([
      api.toolCall(agent.headers, ORIGINAL),
      api.toolCall(agent.headers, { tool: "bash", args: EDITED_ARGS }),
      api.toolCall(agent.headers, ORIGINAL),
      api.toolCall(agent.headers, { tool: "bash", args: EDITED_ARGS }),
    ]);
    const used = verdicts.filter((verdict) => verdict.json.requestId === requestId);
    expect(used.map((verdict) => verdict.json.allowed)).toEqual([true]);
    expect(await getDb().toolCall.count({ where: { requestId, isAllowed: true } })).toBe(1);
  });

  it("any other arguments get their own card", async () => {
    const agent = await registerAgent();
    const requestId = await raise(agent, ASKED);
    await approveWith(requestId, { editedArgs: EDITED_ARGS });
    for (const args of [
      { command: "rm -rf build/cache ", timeoutSeconds: 30 },
      { command: "rm -rf build/cache", timeoutSeconds: 31 },
      { command: "rm -rf build", timeoutSeconds: 29 },
    ]) {
      const other = await api.toolCall(agent.headers, { tool: "bash", args });
      expect(other.json, JSON.stringify(args)).toMatchObject({
        allowed: false,
        code: "TOOL_APPROVAL_REQUIRED",
      });
      expect(other.json.requestId).not.toBe(requestId);
    }
    // Asking for other calls consumed nothing: the approval still runs the edits.
    expect((await api.toolCall(agent.headers, ORIGINAL)).json).toEqual({
      allowed: true,
      requestId,
      args: EDITED_ARGS,
    });
  });

  it("the edited arguments cannot be run by another tool", async () => {
    const agent = await registerAgent();
    const requestId = await raise(agent, ASKED);
    await approveWith(requestId, { editedArgs: EDITED_ARGS });
    // The tool is part of what the hash binds: another tool's call never uses this approval.
    const other = await api.toolCall(agent.headers, { tool: "edit_file", args: EDITED_ARGS });
    expect(other.json.requestId).not.toBe(requestId);
    expect((await api.toolCall(agent.headers, ORIGINAL)).json).toEqual({
      allowed: true,
      requestId,
      args: EDITED_ARGS,
    });
  });

  it("refuses edits that are not arguments of the same tool, with a rejection, or unknown fields (422)", async () => {
    const agent = await registerAgent();
    const requestId = await raise(agent, ASKED);
    const { headers } = await lead();
    const refusals: [Record<string, unknown>, RegExp][] = [
      [
        { approve: true, editedArgs: { path: "notes.txt", content: "x" } },
        /not arguments bash takes/,
      ],
      [{ approve: true, editedArgs: { command: "" } }, /command/],
      [{ approve: true, editedArgs: { command: 42 } }, /command/],
      [{ approve: true, editedArgs: "rm -rf build/cache" }, /editedArgs/],
      [{ approve: true, editedArgs: { command: "cat /etc/shadow" } }, /gate refuses/],
      [{ approve: false, feedback: "no", editedArgs: { command: "ls" } }, /comes with an approval/],
      [{ approve: true, editedPlan: "1. do it" }, /editedPlan/],
      [{ approve: true, editedArgs: { command: "ls" }, tool: "write_file" }, /tool/],
    ];
    for (const [fields, message] of refusals) {
      const answer = await api.respond(headers, requestId, {
        type: "tool_approval_response",
        ...fields,
      });
      expect(answer.status, JSON.stringify(fields)).toBe(422);
      expect(answer.json.error?.code).toBe("INVALID_RESPONSE");
      expect(answer.json.error?.message).toMatch(message);
    }
    expect((await api.getRequest(headers, requestId)).json.status).toBe("pending");
  });

  it("an approval of another incarnation's call is not usable by the new one, edits included", async () => {
    const first = await registerAgent();
    const requestId = await raise(first, ASKED);
    await approveWith(requestId, { editedArgs: EDITED_ARGS });
    const { headers } = await lead();
    await api.forceStop(headers, first.name);
    const respawn = await api.registerAgent(headers, { name: first.name, role: "tester" });
    const second = { authorization: `Bearer ${String(respawn.json.token)}` };

    for (const call of [ORIGINAL, { tool: "bash", args: EDITED_ARGS }]) {
      const verdict = await api.toolCall(second, call);
      expect(verdict.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
      expect(verdict.json.requestId).not.toBe(requestId);
    }
    expect((await api.toolCall(first.headers, ORIGINAL)).status).toBe(401);
  });

  it("a task switch voids the edited approval too", async () => {
    const agent = await registerAgent();
    const requestId = await raise(agent, ASKED);
    await approveWith(requestId, { editedArgs: EDITED_ARGS });
    expect((await api.claimTask(agent.headers, await createTask())).status).toBe(200);
    for (const call of [ORIGINAL, { tool: "bash", args: EDITED_ARGS }]) {
      const verdict = await api.toolCall(agent.headers, call);
      expect(verdict.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
      expect(verdict.json.requestId).not.toBe(requestId);
    }
  });

  it("edits that change nothing are a plain approval", async () => {
    const agent = await registerAgent();
    const requestId = await raise(agent, ASKED);
    const decided = await approveWith(requestId, { editedArgs: { command: "rm -rf build" } });
    expect(decided.json).toMatchObject({ status: "approved", response: null });
    expect((await api.toolCall(agent.headers, ORIGINAL)).json).toEqual({
      allowed: true,
      requestId,
    });
  });

  it("a connected session's edits are bound to its directory", async () => {
    const cwd = "/home/ada/project";
    const connected = await api.connectSession((await createToken("connect")).headers, {
      sessionId: randomUUID(),
      cwd,
    });
    const agent = {
      name: "session",
      token: "",
      headers: { authorization: `Bearer ${String(connected.json.token)}` },
    };
    const call = { tool: "Bash", args: { command: "git push origin main" }, cwd };
    const requestId = await raise(agent, call);
    const editedArgs = { command: "git push origin feature", description: "push the branch" };
    const decided = await approveWith(requestId, { editedArgs });
    expect(decided.json).toMatchObject({
      response: { editedArgs, approvedCallHash: hashToolCall("Bash", editedArgs, cwd) },
    });
    const elsewhere = await api.toolCall(agent.headers, { ...call, args: editedArgs, cwd: "/tmp" });
    expect(elsewhere.json.requestId).not.toBe(requestId);
    expect((await api.toolCall(agent.headers, { ...call, canRunEdits: true })).json).toEqual({
      allowed: true,
      requestId,
      args: editedArgs,
    });
    const refused = await api.respond((await lead()).headers, await raise(agent, call), {
      type: "tool_approval_response",
      approve: true,
      editedArgs: { description: "no command" },
    });
    expect(refused.status).toBe(422);
  });
});

describe("a plan approval with the Lead's edits", () => {
  it("stores the edited plan; the payload keeps the agent's", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const plan = await submitPlan(agent, "1. delete build\n2. rebuild");
    const requestId = String(plan.json.id);
    const { headers } = await lead();
    for (const [fields, status] of [
      [{ approve: true, editedPlan: "   " }, 422],
      [{ approve: true, editedPlan: "x".repeat(50_001) }, 422],
      [{ approve: true, editedPlan: 7 }, 422],
      [{ approve: false, feedback: "no", editedPlan: "1. rebuild" }, 422],
      [{ approve: true, editedArgs: { command: "ls" } }, 422],
    ] as const) {
      const answer = await api.respond(headers, requestId, {
        type: "plan_approval_response",
        ...fields,
      });
      expect(answer.status, JSON.stringify(fields).slice(0, 80)).toBe(status);
      expect(answer.json.error?.code).toBe("INVALID_RESPONSE");
    }
    const decided = await api.respond(headers, requestId, {
      type: "plan_approval_response",
      approve: true,
      editedPlan: "1. rebuild only; keep build/",
    });
    expect(decided.json).toMatchObject({
      status: "approved",
      payload: { plan: "1. delete build\n2. rebuild" },
      response: { editedPlan: "1. rebuild only; keep build/" },
    });
    expect((await api.me(agent.headers)).json.gate).toBe("approved");
  });
});
