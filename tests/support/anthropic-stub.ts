import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// A loopback stand-in for the Anthropic Messages API (`POST /v1/messages`), for tests that run a
// real client against it: our workers' Anthropic model (the SDK, JSON replies) and the Claude Code
// CLI (streaming SSE). It checks what the real API checks, records every request, and answers with
// whatever the test's `respond` returns.

export type StubBlock = { type: string; [key: string]: unknown };
export type StubMessage = { role: string; content: string | StubBlock[] };
export type StubRequestBody = {
  model: string;
  max_tokens: number;
  stream?: boolean;
  system?: string | StubBlock[];
  tools?: { name: string; type?: string; description?: string; input_schema?: { type: string } }[];
  messages: StubMessage[];
};
export type StubRequest = { path: string; headers: IncomingHttpHeaders; body: StubRequestBody };
export type StubReply =
  | { kind: "message"; content: StubBlock[]; stopReason: string }
  | {
      kind: "error";
      status: number;
      type: string;
      message: string;
      headers?: Record<string, string>;
    };

export function replyWithText(text: string): StubReply {
  return { kind: "message", content: [{ type: "text", text }], stopReason: "end_turn" };
}

export function replyWithToolUse(
  name: string,
  input: Record<string, unknown>,
  options: { id?: string; text?: string } = {},
): StubReply {
  return {
    kind: "message",
    content: [
      ...(options.text ? [{ type: "text", text: options.text }] : []),
      { type: "tool_use", id: options.id ?? "toolu_stub_1", name, input },
    ],
    stopReason: "tool_use",
  };
}

export function replyWithError(status: number, type: string, message: string): StubReply {
  return { kind: "error", status, type, message };
}

function contentBlocks(message: StubMessage | undefined): StubBlock[] {
  if (!message) return [];
  return typeof message.content === "string"
    ? [{ type: "text", text: message.content }]
    : message.content;
}

/** Every `tool_result` block the client sent back, in order, with its text flattened. */
export function toolResultsOf(
  request: StubRequest,
): { toolUseId: string; isError: boolean; text: string }[] {
  return request.body.messages.flatMap((message) =>
    contentBlocks(message)
      .filter((block) => block.type === "tool_result")
      .map((block) => ({
        toolUseId: String(block.tool_use_id),
        isError: block.is_error === true,
        text:
          typeof block.content === "string"
            ? block.content
            : Array.isArray(block.content)
              ? (block.content as StubBlock[]).map((part) => String(part.text ?? "")).join("")
              : "",
      })),
  );
}

/** True when the last user turn carries tool results: the client is reporting back, not asking. */
export function isReportingToolResults(request: StubRequest): boolean {
  return contentBlocks(request.body.messages.at(-1)).some((block) => block.type === "tool_result");
}

function findRequestProblem({ path, headers, body }: StubRequest): string | null {
  if (path.split("?")[0] !== "/v1/messages") return `unexpected path ${path}`;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(String(headers["anthropic-version"]))) {
    return "missing anthropic-version header";
  }
  if (typeof body.model !== "string" || typeof body.max_tokens !== "number") {
    return "model and max_tokens are required";
  }
  if (!Array.isArray(body.messages)) return "messages is required";
  // Server tools (`type: "web_search_…"`) carry no schema; every client tool needs an object one.
  const isClientTool = (tool: { type?: unknown }) =>
    tool.type === undefined || tool.type === "custom";
  if (
    body.tools?.some(
      (tool) => !tool.name || (isClientTool(tool) && tool.input_schema?.type !== "object"),
    )
  ) {
    return "every tool needs a name and an object input_schema";
  }
  // The real API merges consecutive turns of one role (Claude Code sends several user turns in a
  // row), so only the roles themselves and each tool result's pairing are checked.
  if (body.messages[0]?.role !== "user") return "messages.0: the first turn must be the user's";
  let offered = new Set<unknown>();
  for (const [index, message] of body.messages.entries()) {
    if (message.role === "assistant") {
      offered = new Set(
        contentBlocks(message)
          .filter((block) => block.type === "tool_use")
          .map((block) => block.id),
      );
      continue;
    }
    // Newer clients (Claude Code 2.1) also interleave `system` turns.
    if (message.role === "system") continue;
    if (message.role !== "user") return `messages.${index}: unknown role ${message.role}`;
    for (const block of contentBlocks(message)) {
      if (block.type === "tool_result" && !offered.has(block.tool_use_id)) {
        return `messages.${index}: tool_result for unknown tool_use ${String(block.tool_use_id)}`;
      }
    }
  }
  return null;
}

const USAGE = { input_tokens: 10, output_tokens: 5 };

function writeJson(response: ServerResponse, reply: StubReply, model: string): void {
  if (reply.kind === "error") {
    response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
    response.end(
      JSON.stringify({ type: "error", error: { type: reply.type, message: reply.message } }),
    );
    return;
  }
  response.writeHead(200, { "content-type": "application/json" });
  response.end(
    JSON.stringify({
      id: "msg_stub",
      type: "message",
      role: "assistant",
      model,
      content: reply.content,
      stop_reason: reply.stopReason,
      stop_sequence: null,
      usage: USAGE,
    }),
  );
}

/** The Messages API's server-sent events for one whole reply, as the streaming clients expect. */
function writeStream(
  response: ServerResponse,
  reply: Extract<StubReply, { kind: "message" }>,
  model: string,
): void {
  const send = (event: string, data: Record<string, unknown>) =>
    response.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  send("message_start", {
    message: {
      id: "msg_stub",
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: USAGE.input_tokens, output_tokens: 1 },
    },
  });
  reply.content.forEach((block, index) => {
    if (block.type === "tool_use") {
      send("content_block_start", { index, content_block: { ...block, input: {} } });
      send("content_block_delta", {
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input ?? {}) },
      });
    } else {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      send("content_block_delta", {
        index,
        delta: { type: "text_delta", text: String(block.text ?? "") },
      });
    }
    send("content_block_stop", { index });
  });
  send("message_delta", {
    delta: { stop_reason: reply.stopReason, stop_sequence: null },
    usage: { output_tokens: USAGE.output_tokens },
  });
  send("message_stop", {});
  response.end();
}

export type AnthropicStub = {
  url: string;
  /** Every request received, valid or not, in arrival order. */
  requests: StubRequest[];
  setResponder(respond: (request: StubRequest) => StubReply): void;
  close(): Promise<void>;
};

export async function startAnthropicStub(options: {
  apiKey: string;
  respond: (request: StubRequest) => StubReply;
  /** A fixed port, for a client configured before the stub starts (e2e); any free port if unset. */
  port?: number;
}): Promise<AnthropicStub> {
  let respond = options.respond;
  const requests: StubRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      let body: StubRequestBody;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as StubRequestBody;
      } catch {
        writeJson(response, replyWithError(400, "invalid_request_error", "body is not JSON"), "");
        return;
      }
      const recorded: StubRequest = { path: request.url ?? "", headers: request.headers, body };
      requests.push(recorded);
      // SDK 1.x sends the key as a bearer token; Claude Code and older SDKs send x-api-key.
      const isAuthorized =
        recorded.headers["x-api-key"] === options.apiKey ||
        recorded.headers.authorization === `Bearer ${options.apiKey}`;
      const problem = findRequestProblem(recorded);
      const reply = !isAuthorized
        ? replyWithError(401, "authentication_error", "invalid x-api-key")
        : problem
          ? replyWithError(
              problem.startsWith("unexpected path") ? 404 : 400,
              "invalid_request_error",
              problem,
            )
          : respond(recorded);
      if (reply.kind === "message" && body.stream === true)
        writeStream(response, reply, body.model);
      else writeJson(response, reply, body.model);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    setResponder(next) {
      respond = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
