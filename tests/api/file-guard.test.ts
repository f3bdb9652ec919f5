import { createHash, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { runEventBridgeDuringFile } from "../support/event-bridge-hooks";
import { api, createToken, lead } from "./fixtures";

type Headers = Record<string, string>;

runEventBridgeDuringFile();

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

async function connectedSession(): Promise<Headers> {
  const connectToken = await createToken("connect");
  const response = await api.connectSession(connectToken.headers, {
    sessionId: randomUUID(),
    cwd: "/home/ada/site",
  });
  return { authorization: `Bearer ${String(response.json.token)}` };
}

/** Claude Code's Write of `content` over a file that holds `before` (null: no file yet). */
function writeCall(before: string | null, content = "<h1>new</h1>\n") {
  return {
    tool: "Write",
    args: { file_path: "index.html", content },
    cwd: "/home/ada/site",
    file: {
      path: "index.html",
      baseHash: before === null ? "absent" : sha256(before),
      before: before ?? "",
      after: content,
    },
  };
}

async function approve(id: string) {
  const answer = await api.respond((await lead()).headers, id, {
    type: "tool_approval_response",
    approve: true,
  });
  expect(answer.status).toBe(200);
}

describe("a file-writing call's card carries its diff", () => {
  it("stores the base hash and both sides in the tool_approval payload, outside the call hash", async () => {
    const session = await connectedSession();
    const call = writeCall("<h1>old</h1>\n");
    const verdict = await api.toolCall(session, call);
    expect(verdict.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
    const request = await getDb().request.findUniqueOrThrow({
      where: { id: String(verdict.json.requestId) },
    });
    expect(request.payload).toMatchObject({ tool: "Write", args: call.args, file: call.file });
    // The same call about another file is the same call: the card binds the file, not the hash.
    const plain = await api.toolCall(await connectedSession(), { ...call, file: undefined });
    const other = await getDb().request.findUniqueOrThrow({
      where: { id: String(plain.json.requestId) },
    });
    expect((other.payload as { callHash: string }).callHash).toBe(
      (request.payload as { callHash: string }).callHash,
    );
  });

  it.each([
    ["a before that is not the hashed file", { before: "something else" }],
    ["an after that is not what the arguments make", { after: "<h1>shown</h1>\n" }],
    ["a path other than the arguments'", { path: "other.html" }],
    ["a malformed hash", { baseHash: "sha256:xyz" }],
    ["after without before", { before: undefined }],
    ["neither both sides nor why not", { after: undefined }],
    ["an unknown field", { diff: "+x" }],
    [
      "'does not apply' for a change that applies",
      { after: undefined, unshown: { reason: "does_not_apply" } },
    ],
  ])("refuses %s with 400 INVALID_INPUT", async (_label, change) => {
    const call = writeCall("<h1>old</h1>\n");
    const answer = await api.toolCall(await connectedSession(), {
      ...call,
      file: { ...call.file, ...change },
    });
    expect(answer.status).toBe(400);
    expect(answer.json.error?.code).toBe("INVALID_INPUT");
  });

  it("takes a diff up to its limit in the body, and refuses a larger body with 413", async () => {
    const session = await connectedSession();
    const before = "a".repeat(100 * 1024);
    const after = "b".repeat(100 * 1024);
    const fits = await api.toolCall(session, {
      tool: "Write",
      args: { file_path: "big.txt", content: after },
      file: { path: "big.txt", baseHash: sha256(before), before, after },
    });
    expect(fits.json).toMatchObject({ code: "TOOL_APPROVAL_REQUIRED" });
    const tooBig = await api.toolCall(session, {
      tool: "Write",
      args: { file_path: "big.txt", content: "c".repeat(200 * 1024) },
      file: { path: "big.txt", baseHash: "absent", before: "", after: "c".repeat(200 * 1024) },
    });
    expect(tooBig.status).toBe(413);
  });

  it("a MultiEdit that multiplies the file gets a card saying too large, not a 500", async () => {
    // A few kilobytes of arguments whose replace_all steps would make 600 million characters: the
    // server's check built them, and the RangeError came out as 500 INTERNAL.
    const session = await connectedSession();
    const args = {
      file_path: "x.txt",
      edits: [
        { old_string: "", new_string: "b".repeat(1000) },
        { old_string: "b", new_string: "c".repeat(1000), replace_all: true },
        { old_string: "c", new_string: "d".repeat(600), replace_all: true },
      ],
    };
    const unshown = { reason: "too_large" };
    const file = { path: "x.txt", baseHash: "absent", before: "", unshown };
    const answer = await api.toolCall(session, { tool: "MultiEdit", args, file });
    expect(answer.json).toMatchObject({ code: "TOOL_APPROVAL_REQUIRED" });
    // Sides that claim to be what the edits make are refused, as any sides that are not.
    const claimed = { path: "x.txt", baseHash: "absent", before: "", after: "d" };
    const refused = await api.toolCall(session, { tool: "MultiEdit", args, file: claimed });
    expect(refused.status).toBe(400);
  });

  it("refuses a file with a tool that changes no file", async () => {
    const answer = await api.toolCall(await connectedSession(), {
      tool: "Bash",
      args: { command: "rm index.html" },
      file: { path: "index.html", baseHash: "absent", before: "", after: "" },
    });
    expect(answer.status).toBe(400);
  });

  it("accepts an Edit and a MultiEdit whose after is the edits applied in order", async () => {
    const session = await connectedSession();
    const before = "a b a\n";
    const edit = await api.toolCall(session, {
      tool: "Edit",
      args: { file_path: "x.txt", old_string: "a", new_string: "c", replace_all: true },
      file: { path: "x.txt", baseHash: sha256(before), before, after: "c b c\n" },
    });
    expect(edit.json.code).toBe("TOOL_APPROVAL_REQUIRED");
    const multi = await api.toolCall(session, {
      tool: "MultiEdit",
      args: {
        file_path: "x.txt",
        edits: [
          { old_string: "b", new_string: "a" },
          { old_string: "a a a", new_string: "done" },
        ],
      },
      file: { path: "x.txt", baseHash: sha256(before), before, after: "done\n" },
    });
    expect(multi.json.code).toBe("TOOL_APPROVAL_REQUIRED");
  });
});

describe("the approval binds the base hash (TOCTOU)", () => {
  it("the file changed after the approval: FILE_CHANGED, and the next call asks again", async () => {
    const session = await connectedSession();
    const asked = await api.toolCall(session, writeCall("<h1>old</h1>\n"));
    await approve(String(asked.json.requestId));

    // Someone rewrote the file between the Lead's approval and the retry.
    const retry = await api.toolCall(session, writeCall("<h1>attacker</h1>\n"));
    expect(retry.json).toMatchObject({
      allowed: false,
      code: "FILE_CHANGED",
      requestId: asked.json.requestId,
    });
    expect(String(retry.json.reason)).toContain("the file changed since the Lead approved");

    // The approval is void, even for the file it was given for.
    const original = await api.toolCall(session, writeCall("<h1>old</h1>\n"));
    expect(original.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
    expect(original.json.requestId).not.toBe(asked.json.requestId);
    const card = await getDb().request.findUniqueOrThrow({
      where: { id: String(original.json.requestId) },
    });
    expect((card.payload as { file: { before: string } }).file.before).toBe("<h1>old</h1>\n");
  });

  it("a retry without a file, of an approval that had one, is refused", async () => {
    const session = await connectedSession();
    const call = writeCall(null);
    const asked = await api.toolCall(session, call);
    await approve(String(asked.json.requestId));
    const retry = await api.toolCall(session, { ...call, file: undefined });
    expect(retry.json).toMatchObject({ allowed: false, code: "FILE_CHANGED" });
    expect(String(retry.json.reason)).toContain("does not say what the file is now");
  });

  it("an unchanged file runs once, and only once", async () => {
    const session = await connectedSession();
    const call = writeCall("<h1>old</h1>\n");
    const asked = await api.toolCall(session, call);
    await approve(String(asked.json.requestId));
    expect((await api.toolCall(session, call)).json).toEqual({
      allowed: true,
      requestId: asked.json.requestId,
    });
    expect((await api.toolCall(session, call)).json).toMatchObject({
      code: "TOOL_APPROVAL_REQUIRED",
    });
    const records = await getDb().toolCall.findMany({
      where: { requestId: String(asked.json.requestId), isAllowed: true },
    });
    expect(records).toHaveLength(1);
  });

  it("a pending card of an older file is superseded by a card with the new diff", async () => {
    const session = await connectedSession();
    const first = await api.toolCall(session, writeCall("v1\n"));
    const again = await api.toolCall(session, writeCall("v1\n"));
    expect(again.json).toMatchObject({
      code: "TOOL_APPROVAL_PENDING",
      requestId: first.json.requestId,
    });
    const changed = await api.toolCall(session, writeCall("v2\n"));
    expect(changed.json.code).toBe("TOOL_APPROVAL_REQUIRED");
    expect(changed.json.requestId).not.toBe(first.json.requestId);
    const old = await getDb().request.findUniqueOrThrow({
      where: { id: String(first.json.requestId) },
    });
    expect(old.status).toBe("superseded");
  });
});
