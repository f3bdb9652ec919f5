import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AnthropicModel } from "./anthropic-model";
import type { ToolSpec, TranscriptEntry } from "./model";

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

type Block = { type: string; [key: string]: unknown };
type RequestBody = {
  model: string;
  max_tokens: number;
  system?: string;
  tools?: { name: string; description?: string; input_schema: { type: string } }[];
  messages: { role: string; content: Block[] }[];
};
type Recorded = { path: string; headers: IncomingHttpHeaders; body: RequestBody };
type Reply = { status: number; body: unknown; headers?: Record<string, string> };

function replyWithError(status: number, type: string, message: string): Reply {
  return { status, body: { type: "error", error: { type, message } } };
}

function replyWithMessage(content: Block[], stopReason: string): Reply {
  return {
    status: 200,
    body: {
      id: "msg_stub",
      type: "message",
      role: "assistant",
      model: "claude-stub",
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    },
  };
}

/** Checks what the real Messages API checks, so a malformed request fails here as it would there. */
function findRequestProblem({ path, headers, body }: Recorded): string | null {
  if (path !== "/v1/messages") return `unexpected path ${path}`;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(String(headers["anthropic-version"]))) {
    return "missing anthropic-version header";
  }
  if (typeof body.model !== "string" || typeof body.max_tokens !== "number") {
    return "model and max_tokens are required";
  }
  if (!body.tools?.every((tool) => tool.name && tool.input_schema?.type === "object")) {
    return "every tool needs a name and an object input_schema";
  }
  for (const [index, message] of body.messages.entries()) {
    const expectedRole = index % 2 === 0 ? "user" : "assistant";
    if (message.role !== expectedRole) return `messages.${index}: expected role ${expectedRole}`;
    const previous = body.messages[index - 1];
    const offered = new Set(
      previous?.content.filter((block) => block.type === "tool_use").map((block) => block.id),
    );
    for (const block of message.content) {
      if (block.type === "tool_result" && !offered.has(block.tool_use_id)) {
        return `messages.${index}: tool_result for unknown tool_use ${String(block.tool_use_id)}`;
      }
    }
  }
  return null;
}

/** The happy path: ask for a tool first; once its result comes back, finish with text. */
function replyToConversation(body: RequestBody): Reply {
  const last = body.messages.at(-1);
  if (last?.content.some((block) => block.type === "tool_result")) {
    return replyWithMessage([{ type: "text", text: "Done: hello.txt is written." }], "end_turn");
  }
  return replyWithMessage(
    [
      { type: "text", text: "I'll write the file." },
      {
        type: "tool_use",
        id: "toolu_stub_1",
        name: "write_file",
        input: { path: "hello.txt", content: "hello" },
        caller: { type: "direct" },
      },
    ],
    "tool_use",
  );
}

let server: Server;
let baseURL: string;
let requests: Recorded[] = [];
let respond: (request: Recorded) => Reply = ({ body }) => replyToConversation(body);

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const recorded: Recorded = {
        path: request.url ?? "",
        headers: request.headers,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as RequestBody,
      };
      requests.push(recorded);
      // SDK 1.x sends the key as a bearer token; the x-api-key header of older SDKs is accepted too.
      const isAuthorized =
        recorded.headers["x-api-key"] === API_KEY ||
        recorded.headers.authorization === `Bearer ${API_KEY}`;
      const problem = findRequestProblem(recorded);
      const reply = !isAuthorized
        ? replyWithError(401, "authentication_error", "invalid x-api-key")
        : problem
          ? replyWithError(400, "invalid_request_error", problem)
          : respond(recorded);
      response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      response.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests = [];
  respond = ({ body }) => replyToConversation(body);
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
    respond = () =>
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
    respond = () => ({
      ...replyWithError(500, "api_error", "Internal server error"),
      headers: { "retry-after-ms": "1" },
    });
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
