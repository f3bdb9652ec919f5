import type { MessageView } from "../../lib/messages/views";
import type { QuestionAnswer } from "../../lib/shared/protocol/question";

/** A tool the model may call; `inputSchema` is JSON Schema (what LLM tool-use APIs expect). */
export type ToolSpec = { name: string; description: string; inputSchema: Record<string, unknown> };

export type ToolCall = { id: string; name: string; args: Record<string, unknown> };

export type ToolResult = {
  toolCallId: string;
  name: string;
  content: string;
  isError: boolean;
  /** Machine-readable outcome for blocked calls, e.g. PLAN_GATE_BLOCKED. */
  code?: string;
};

/**
 * The conversation as the worker keeps it. `user` entries are what the agent is told (its prompt,
 * a block of inbox messages, protocol outcomes); `messages` carries the same inbox messages in
 * structured form for models that reason over them (the scripted model does).
 */
export type TranscriptEntry =
  | { role: "user"; content: string; messages?: MessageView[]; notices?: ProtocolNotice[] }
  | { role: "assistant"; text?: string; toolCalls: ToolCall[] }
  | { role: "tool"; results: ToolResult[] };

/** Protocol outcomes the worker has verified with the server, in structured form. */
export type ProtocolNotice =
  | {
      kind: "plan_decided";
      requestId: string;
      isApproved: boolean;
      feedback: string | null;
      /** The Lead approved this text in place of the agent's plan. */
      editedPlan?: string;
    }
  | { kind: "plan_required"; reason: string }
  | {
      kind: "tool_approval_decided";
      requestId: string;
      isApproved: boolean;
      feedback: string | null;
      /** The Lead approved the call with these arguments instead; the retry runs them. */
      editedArgs?: Record<string, unknown>;
    }
  | { kind: "shutdown_decided"; requestId: string; isApproved: boolean; feedback: string | null }
  | {
      kind: "question_answered";
      requestId: string;
      /** Null when the question went unanswered (declined, or timed out without a default). */
      answer: QuestionAnswer | null;
      /** Nobody answered in time and the question's default stood in. */
      isDefault: boolean;
      feedback: string | null;
    };

/** One assistant step. No tool calls means the agent has nothing to do until new messages arrive. */
export type ModelStep = { text?: string; toolCalls: ToolCall[] };

export type ModelInput = {
  system: string;
  transcript: readonly TranscriptEntry[];
  tools: readonly ToolSpec[];
};

export interface Model {
  next(input: ModelInput): Promise<ModelStep>;
}
