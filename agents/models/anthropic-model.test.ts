import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AnthropicModel } from "./anthropic-model";
import type { ToolSpec, TranscriptEntry } from "./model";
import {
  isReportingToolResults,
  replyWithError,
  replyWithText,
  replyWithToolUse,
  startAnthropicStub,
  type AnthropicStub,
  type StubBlock,
  type StubReply,
  type StubRequest,
} from "../../tests/support/anthropic-stub";

const API_KEY = "sk-test-key";

const TOOLS: ToolSpec[] = [
  {
    name: "write_file",
    description: "Write a file in the workspace",
    inputSchema: {
      type: "object",
      properties: { path: { type: "string" }, content: { type: "string" } },
      required: ["path", "content"],
    },
  },
  { name: "idle", description: "Nothing to do until new messages arrive", inputSchema: {} },
];

function replyWithMessage(content: StubBlock[], stopReason: string): StubReply {
  return { kind: "message", content, stopReason };
}

/** The happy path: ask for a tool first; once its result comes back, finish with text. */
function replyToConversation(request: StubRequest): StubReply {
  if (isReportingToolResults(request)) return replyWithText("Done: hello.txt is written.");
  return replyWithToolUse(
    "write_file",
    { path: "hello.txt", content: "hello" },
    { text: "I'll write the file." },
  );
}

let stub: AnthropicStub;
let baseURL: string;
let requests: StubRequest[] = [];

beforeAll(async () => {
  stub = await startAnthropicStub({ apiKey: API_KEY, respond: replyToConversation });
  baseURL = stub.url;
  requests = stub.requests;
});

afterAll(async () => {
  await stub.close();
});

beforeEach(() => {
  requests.length = 0;
  stub.setResponder(replyToConversation);
});

function createModel(apiKey = API_KEY): AnthropicModel {
  return new AnthropicModel({ apiKey, baseURL, model: "claude-stub", maxTokens: 512 });
}

describe("AnthropicModel", () => {
  it("runs a tool-use round trip through the real SDK", async () => {
    const model = createModel();
    const transcript: TranscriptEntry[] = [{ role: "user", content: "Write hello.txt" }];

    const first = await model.next({ system: "You are a test agent.", transcript, tools: TOOLS });
    expect(first).toEqual({
      text: "I'll write the file.",
      toolCalls: [
        { id: "toolu_stub_1", name: "write_file", args: { path: "hello.txt", content: "hello" } },
      ],
    });

    transcript.push(
      { role: "assistant", text: first.text, toolCalls: first.toolCalls },
      {
        role: "tool",
        results: [
          {
            toolCallId: "toolu_stub_1",
            name: "write_file",
            content: "wrote 5 bytes",
            isError: false,
          },
        ],
      },
      { role: "user", content: "New messages, oldest first:\n- from lead: thanks" },
    );
    const second = await model.next({ system: "You are a test agent.", transcript, tools: TOOLS });
    expect(second).toEqual({ text: "Done: hello.txt is written.", toolCalls: [] });

    expect(requests).toHaveLength(2);
    const { body } = requests[1]!;
    expect(body).toMatchObject({
      model: "claude-stub",
      max_tokens: 512,
      system: "You are a test agent.",
    });
    expect(body.tools).toEqual([
      {
        name: "write_file",
        description: "Write a file in the workspace",
        input_schema: TOOLS[0]!.inputSchema,
      },
      {
        name: "idle",
        description: "Nothing to do until new messages arrive",
        input_schema: { type: "object" },
      },
    ]);
    // The tool results and the inbox after them are one user turn, results first.
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Write hello.txt" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "I'll write the file." },
          {
            type: "tool_use",
            id: "toolu_stub_1",
            name: "write_file",
            input: { path: "hello.txt", content: "hello" },
          },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_stub_1",
            content: "wrote 5 bytes",
            is_error: false,
          },
          { type: "text", text: "New messages, oldest first:\n- from lead: thanks" },
        ],
      },
    ]);
  });

  it("tells the model why a gated call was blocked and skips steps with nothing to say", async () => {
    const model = createModel();
    await model.next({
      system: "",
      transcript: [
        { role: "user", content: "Go" },
        { role: "assistant", toolCalls: [{ id: "toolu_a", name: "write_file", args: {} }] },
        {
          role: "tool",
          results: [
            {
              toolCallId: "toolu_a",
              name: "write_file",
              content: "blocked: submit a plan first",
              isError: true,
              code: "PLAN_GATE_BLOCKED",
            },
          ],
        },
        { role: "assistant", toolCalls: [] },
        { role: "user", content: "Your plan was approved." },
      ],
      tools: TOOLS,
    });
    const { body } = requests[0]!;
    expect(body).not.toHaveProperty("system");
    expect(body.messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    expect(body.messages[2]?.content).toEqual([
      {
        type: "tool_result",
        tool_use_id: "toolu_a",
        content: "[PLAN_GATE_BLOCKED] blocked: submit a plan first",
        is_error: true,
      },
      { type: "text", text: "Your plan was approved." },
    ]);
  });

  it("drops tool results whose call the worker trimmed off the transcript", async () => {
    await createModel().next({
      system: "",
      transcript: [
        { role: "user", content: "You are an agent." },
        {
          role: "tool",
          results: [{ toolCallId: "toolu_gone", name: "idle", content: "ok", isError: false }],
        },
        { role: "user", content: "New message: carry on" },
      ],
      tools: TOOLS,
    });
    expect(requests[0]?.body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "You are an agent." },
          { type: "text", text: "New message: carry on" },
        ],
      },
    ]);
  });

  it("keeps only finished tool calls when the answer hits max_tokens", async () => {
    stub.setResponder(() =>
      replyWithMessage(
        [
          { type: "text", text: "Writing two files." },
          {
            type: "tool_use",
            id: "toolu_1",
            name: "write_file",
            input: { path: "a", content: "a" },
          },
          { type: "tool_use", id: "toolu_2", name: "write_file", input: { path: "b" } },
        ],
        "max_tokens",
      ),
    );
    const step = await createModel().next({
      system: "",
      transcript: [{ role: "user", content: "Write a and b" }],
      tools: TOOLS,
    });
    expect(step).toEqual({
      text: "Writing two files.",
      toolCalls: [{ id: "toolu_1", name: "write_file", args: { path: "a", content: "a" } }],
    });
  });

  it("turns a 401 into a clear error without retrying", async () => {
    const model = createModel("sk-wrong-key");
    await expect(
      model.next({ system: "", transcript: [{ role: "user", content: "hi" }], tools: TOOLS }),
    ).rejects.toThrow(
      "Anthropic Messages API returned HTTP 401 authentication_error: invalid x-api-key",
    );
    expect(requests).toHaveLength(1);
  });

  it("turns a 500 into a clear error after two retries", async () => {
    stub.setResponder(() => ({
      ...replyWithError(500, "api_error", "Internal server error"),
      headers: { "retry-after-ms": "1" },
    }));
    await expect(
      createModel().next({
        system: "",
        transcript: [{ role: "user", content: "hi" }],
        tools: TOOLS,
      }),
    ).rejects.toThrow("Anthropic Messages API returned HTTP 500 api_error: Internal server error");
    expect(requests).toHaveLength(3);
  });

  it("says so when the API cannot be reached", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const model = new AnthropicModel({
      apiKey: API_KEY,
      baseURL: `http://127.0.0.1:${port}`,
      model: "claude-stub",
    });
    await expect(
      model.next({ system: "", transcript: [{ role: "user", content: "hi" }], tools: TOOLS }),
    ).rejects.toThrow(/Anthropic Messages API unreachable/);
  });

  it("refuses to start without an API key", () => {
    expect(() => new AnthropicModel({ apiKey: "", model: "claude-stub" })).toThrow(/API key/);
  });
});
