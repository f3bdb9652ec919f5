import type { AskResult } from "../../lib/sdk/agent-client";
import { ApiError, UnreachableError } from "../../lib/sdk/errors";
import { questionPayloadSchema, type QuestionPayload } from "../../lib/shared/protocol/question";
import { ConnectRefusedError } from "./agent-token";
import { actAs, UsageError } from "./wait-for-approval";

export type AskCommandOptions = {
  question: string;
  /** `id` or `id=Label`, as given to `--option`. */
  options: string[];
  default?: string;
  allowText?: boolean;
  agent?: string;
  url?: string;
  timeoutSeconds: number;
};

/** Exit codes a shell script branches on; 1 is left to misuse (a bad flag, a bad default). */
export const ASK_EXIT = { answered: 0, unanswered: 2 } as const;

export type AskCommandResult = { exitCode: number; stdout: string | null; stderr: string | null };

function parseOption(spec: string): { id: string; label: string } {
  const separator = spec.indexOf("=");
  if (separator === -1) return { id: spec, label: spec };
  return { id: spec.slice(0, separator), label: spec.slice(separator + 1) };
}

const FLAG_OF: Record<string, string> = {
  question: "the question",
  options: "--option",
  allowText: "--option or --allow-text",
  default: "--default",
};

/** The question as the server will check it, checked here first so misuse never reaches it. */
export function questionOf(options: AskCommandOptions): QuestionPayload {
  const parsed = questionPayloadSchema.safeParse({
    question: options.question,
    ...(options.options.length > 0 ? { options: options.options.map(parseOption) } : {}),
    ...(options.allowText ? { allowText: true } : {}),
    ...(options.default === undefined ? {} : { default: options.default }),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? "question");
    throw new UsageError(`${FLAG_OF[field] ?? field}: ${issue?.message}`);
  }
  return parsed.data;
}

/** The answer on one line: the option id, the text, or `id: text` when the Lead gave both. */
function answerLine(result: Extract<AskResult, { status: "answered" }>): string {
  const text = result.answer.text?.replace(/\s*\r?\n\s*/g, " ") ?? null;
  return [result.answer.option, text].filter((part) => part !== null).join(": ");
}

function unansweredMessage(result: Extract<AskResult, { status: "unanswered" }>): string {
  switch (result.reason) {
    case "declined":
      return `Handshake: the Lead declined to answer${result.feedback ? `: ${result.feedback}` : ""}`;
    case "timed_out":
      return "Handshake: no answer from the Lead before the deadline, and the question has no default";
    case "withdrawn":
      return `Handshake: the question was withdrawn before an answer (${result.feedback ?? "no reason given"})`;
  }
}

/** Asks the Lead and waits: 0 with the answer on stdout, 2 unanswered, timed out or unreachable. */
export async function askLead(options: AskCommandOptions): Promise<AskCommandResult> {
  const question = questionOf(options);
  try {
    const result = await actAs(options, (client) =>
      client.ask({ ...question, timeoutSeconds: options.timeoutSeconds }),
    );
    if (result.status === "unanswered") {
      return { exitCode: ASK_EXIT.unanswered, stdout: null, stderr: unansweredMessage(result) };
    }
    return {
      exitCode: ASK_EXIT.answered,
      stdout: answerLine(result),
      stderr: result.byDefault
        ? "Handshake: no answer from the Lead before the deadline, so the question's default answered"
        : null,
    };
  } catch (error) {
    if (error instanceof UnreachableError || error instanceof ConnectRefusedError) {
      return { exitCode: ASK_EXIT.unanswered, stdout: null, stderr: error.message };
    }
    if (error instanceof ApiError) {
      return {
        exitCode: ASK_EXIT.unanswered,
        stdout: null,
        stderr: `Handshake refused the question (${error.code}: ${error.message})`,
      };
    }
    throw error;
  }
}
