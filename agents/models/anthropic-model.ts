import Anthropic, { APIConnectionTimeoutError, APIError } from "@anthropic-ai/sdk";
import type {
  ContentBlockParam,
  Message,
  Tool,
  ToolUseBlock,
} from "@anthropic-ai/sdk/resources/messages";
import type { Model, ModelInput, ModelStep, ToolSpec, TranscriptEntry } from "./model";

export type AnthropicModelOptions = {
  apiKey: string;
  /** Defaults to the public API; tests point it at a local stub. */
  baseURL?: string;
  model: string;
  maxTokens?: number;
};

// Passed explicitly so the SDK never falls back to ANTHROPIC_BASE_URL: the worker's env module is
// the only place configuration comes from.
const DEFAULT_BASE_URL = "https://api.anthropic.com";
const DEFAULT_MAX_TOKENS = 4096;
// One agent step; long enough for a full max_tokens answer, short enough that a hung connection
// surfaces as an error instead of a silently stuck agent.
const REQUEST_TIMEOUT_MS = 120_000;
const MAX_RETRIES = 2;

type ChatMessage = { role: "user" | "assistant"; content: ContentBlockParam[] };

/**
 * Maps the worker's transcript to Messages API turns. Turns must alternate, so consecutive entries
 * of the same side share one message: a tool entry's results and the inbox that follows them
 * become one user turn, tool_result blocks first as the API requires. The worker trims old entries
 * off the front, which can leave results whose tool_use is gone; the API rejects those, so they are
 * dropped.
 */
function toMessages(transcript: readonly TranscriptEntry[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let previousCallIds = new Set<string>();
  const append = (role: ChatMessage["role"], blocks: ContentBlockParam[]) => {
    // The API rejects empty turns and blank text blocks, e.g. an assistant step that only idled.
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  const toTextBlocks = (text: string | undefined): ContentBlockParam[] =>
    text?.trim() ? [{ type: "text", text }] : [];

  for (const entry of transcript) {
    switch (entry.role) {
      case "user":
        append("user", toTextBlocks(entry.content));
        break;
      case "assistant":
        previousCallIds = new Set(entry.toolCalls.map((call) => call.id));
        append("assistant", [
          ...toTextBlocks(entry.text),
          ...entry.toolCalls.map((call): ContentBlockParam => ({
            type: "tool_use",
            id: call.id,
            name: call.name,
            input: call.args,
          })),
        ]);
        break;
      case "tool":
        append(
          "user",
          entry.results
            .filter((result) => previousCallIds.has(result.toolCallId))
            .map((result): ContentBlockParam => ({
              type: "tool_result",
              tool_use_id: result.toolCallId,
              // The code (PLAN_GATE_BLOCKED, TOOL_APPROVAL_REQUIRED, ...) tells the model why a call
              // did not run, which the prose alone may leave implicit.
              content: result.code ? `[${result.code}] ${result.content}` : result.content,
              is_error: result.isError,
            })),
        );
        break;
    }
  }
  return messages;
}

function toAnthropicTool(tool: ToolSpec): Tool {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: { ...tool.inputSchema, type: "object" },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function toModelStep(message: Message): ModelStep {
  const texts = message.content.flatMap((block) => (block.type === "text" ? [block.text] : []));
  const toolUses = message.content.filter(
    (block): block is ToolUseBlock => block.type === "tool_use",
  );
  let calls: ToolUseBlock[];
  switch (message.stop_reason) {
    case "tool_use":
      calls = toolUses;
      break;
    case "max_tokens":
    case "model_context_window_exceeded":
      // Cut off mid-answer: a trailing tool_use may hold half its input (a truncated write_file
      // would write a truncated file), so only the calls that were finished are kept.
      calls = message.content.at(-1)?.type === "tool_use" ? toolUses.slice(0, -1) : toolUses;
      break;
    default:
      // end_turn, stop_sequence, refusal, ...: the model has finished and asks for nothing.
      calls = [];
  }
  const toolCalls = calls.map((block) => ({
    id: block.id,
    name: block.name,
    args: isRecord(block.input) ? block.input : {},
  }));
  const text = texts.join("\n");
  return text ? { text, toolCalls } : { toolCalls };
}

function describeError(error: unknown): Error {
  if (error instanceof APIConnectionTimeoutError) {
    return new Error(
      `Anthropic Messages API timed out after ${REQUEST_TIMEOUT_MS / 1000}s (${MAX_RETRIES} retries)`,
      { cause: error },
    );
  }
  if (error instanceof APIError && error.status !== undefined) {
    const type = error.type ? ` ${error.type}` : "";
    return new Error(
      `Anthropic Messages API returned HTTP ${error.status}${type}: ${error.apiMessage ?? error.message}`,
      { cause: error },
    );
  }
  if (error instanceof APIError) {
    return new Error(`Anthropic Messages API unreachable: ${error.message}`, { cause: error });
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** A Model backed by the Anthropic Messages API with tool use. */
export class AnthropicModel implements Model {
  private readonly client: Anthropic;

  constructor(private readonly options: AnthropicModelOptions) {
    if (!options.apiKey) throw new Error("AnthropicModel needs an API key");
    if (!options.model) throw new Error("AnthropicModel needs a model name");
    this.client = new Anthropic({
      apiKey: options.apiKey,
      baseURL: options.baseURL ?? DEFAULT_BASE_URL,
      timeout: REQUEST_TIMEOUT_MS,
      maxRetries: MAX_RETRIES,
    });
  }

  async next({ system, transcript, tools }: ModelInput): Promise<ModelStep> {
    let response: Message;
    try {
      response = await this.client.messages.create({
        model: this.options.model,
        max_tokens: this.options.maxTokens ?? DEFAULT_MAX_TOKENS,
        ...(system.trim() ? { system } : {}),
        messages: toMessages(transcript),
        ...(tools.length > 0 ? { tools: tools.map(toAnthropicTool) } : {}),
      });
    } catch (error) {
      throw describeError(error);
    }
    return toModelStep(response);
  }
}
