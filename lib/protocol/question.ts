import { z } from "zod";
import { AppError } from "../errors";
import type { ProtocolTypeDefinition, TimeoutOutcome } from "./definition";

/** Option ids are what a script, the CLI and the `default` name; short and safe to print. */
const optionIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/, "option ids are [A-Za-z0-9_.-], at most 40");

const questionOptionSchema = z.strictObject({
  id: optionIdSchema,
  label: z.string().trim().min(1).max(200),
  description: z.string().trim().max(1_000).optional(),
});

/** At most nine options: the console answers with the keys 1–9. */
export const MAX_QUESTION_OPTIONS = 9;

export const questionPayloadSchema = z
  .strictObject({
    question: z.string().trim().min(1, "a question cannot be empty").max(2_000),
    options: z.array(questionOptionSchema).min(1).max(MAX_QUESTION_OPTIONS).optional(),
    allowText: z.boolean().optional(),
    /** An option id, or (when text is allowed) a text: what a timeout answers. */
    default: z.string().trim().min(1).max(2_000).optional(),
  })
  .superRefine((payload, context) => {
    const ids = (payload.options ?? []).map((option) => option.id);
    if (new Set(ids).size !== ids.length) {
      context.addIssue({ code: "custom", path: ["options"], message: "option ids must differ" });
    }
    if (!payload.options && payload.allowText !== true) {
      context.addIssue({
        code: "custom",
        path: ["allowText"],
        message: "a question needs options or allowText: true, or it cannot be answered",
      });
    }
    if (
      payload.default !== undefined &&
      !ids.includes(payload.default) &&
      payload.allowText !== true
    ) {
      context.addIssue({
        code: "custom",
        path: ["default"],
        message: "the default must be one of the option ids (or allowText must be true)",
      });
    }
  });
export type QuestionPayload = z.infer<typeof questionPayloadSchema>;

/** What the Lead sends: an option, a text, or both. */
export const questionAnswerInputSchema = z
  .strictObject({
    option: optionIdSchema.optional(),
    text: z.string().trim().min(1).max(10_000).optional(),
  })
  .refine((answer) => answer.option !== undefined || answer.text !== undefined, {
    message: "an answer names an option or gives a text",
  });
export type QuestionAnswerInput = z.infer<typeof questionAnswerInputSchema>;

/** The answer as stored in the request's `response` and sent to the agent. */
export const questionAnswerSchema = z.strictObject({
  option: z.string().nullable(),
  /** The chosen option's label, so the agent need not look it up. */
  label: z.string().nullable(),
  text: z.string().nullable(),
});
export type QuestionAnswer = z.infer<typeof questionAnswerSchema>;

export const questionResponseSchema = z.strictObject({ answer: questionAnswerSchema });
export type QuestionResponse = z.infer<typeof questionResponseSchema>;

function invalidAnswer(message: string): AppError {
  return new AppError("INVALID_RESPONSE", message);
}

/** Resolves an answer against the question it answers; throws INVALID_RESPONSE if it cannot be one. */
export function resolveAnswer(
  payload: QuestionPayload,
  input: QuestionAnswerInput,
): QuestionAnswer {
  const option =
    input.option === undefined
      ? null
      : (payload.options ?? []).find((candidate) => candidate.id === input.option);
  if (option === undefined) {
    const known = (payload.options ?? []).map((candidate) => candidate.id).join(", ") || "none";
    throw invalidAnswer(`no option '${input.option}' in this question (options: ${known})`);
  }
  if (input.text !== undefined && payload.allowText !== true) {
    throw invalidAnswer("this question takes one of its options, not a text");
  }
  return { option: option?.id ?? null, label: option?.label ?? null, text: input.text ?? null };
}

/** The default answers when nobody does; without one the question ends unanswered. */
function timeoutOf(payload: QuestionPayload): TimeoutOutcome {
  if (payload.default === undefined) return { policy: "unanswered", outcome: "unanswered" };
  const option = payload.options?.find((candidate) => candidate.id === payload.default);
  const answer: QuestionAnswer = option
    ? { option: option.id, label: option.label, text: null }
    : { option: null, label: null, text: payload.default };
  return { policy: "answer_default", outcome: "answered", response: { answer } };
}

/** One line for an agent or a terminal: what the answer says. */
export function describeAnswer(answer: QuestionAnswer): string {
  const chosen =
    answer.option === null ? null : `${answer.label ?? answer.option} (${answer.option})`;
  return [chosen, answer.text].filter((part) => part !== null).join(": ");
}

/**
 * An agent asks the Lead for a fact or a choice only a person has; the Lead answers with an option
 * and/or a text, or declines (with feedback) and the question ends unanswered.
 */
export const question: ProtocolTypeDefinition = {
  type: "question",
  responseType: "question_response",
  label: "question",
  payloadSchema: questionPayloadSchema,
  responseSchema: z.strictObject({ answer: questionAnswerInputSchema.optional() }),
  prepareResponse: (payload, draft) => {
    const input = draft.fields.answer as QuestionAnswerInput | undefined;
    if (!draft.approve) {
      if (input) throw invalidAnswer("a declined question carries no answer: approve to answer");
      return null;
    }
    if (!input) throw invalidAnswer("answer the question: `answer: {option?, text?}`");
    return { answer: resolveAnswer(payload as QuestionPayload, input) };
  },
  summarize: (payload) => String(payload.question ?? "").slice(0, 200),
  directions: ["agent_to_lead"],
  outcomes: ["answered", "unanswered"],
  decisionOutcome: (approve) => (approve ? "answered" : "unanswered"),
  waitingStatus: () => "waiting_answer",
  defaultTimeoutSeconds: () => 10 * 60,
  timeout: (_direction, payload) => timeoutOf(payload as QuestionPayload),
  // The newest question is the one the agent waits on; an older one is withdrawn.
  onDuplicatePending: "supersede",
  isFencedToWork: false,
  onApproved: ({ setAgentState }) => setAgentState({ status: "working" }),
  onRejected: ({ setAgentState }) => setAgentState({ status: "working" }),
  onExpired: ({ setAgentState }) => setAgentState({ status: "working" }),
};
