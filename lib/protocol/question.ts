import { z } from "zod";
import { AppError } from "../errors";
import {
  questionAnswerInputSchema,
  type QuestionAnswer,
  type QuestionAnswerInput,
  type QuestionPayload,
  questionPayloadSchema,
} from "../shared/protocol/question";
import {
  summaryOf,
  type EffectContext,
  type ProtocolTypeDefinition,
  type TimeoutOutcome,
} from "./definition";

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

/** Answered, the agent works again, unless another request of its own still waits on the Lead. */
async function statusAfterAnswer({ setAgentState, statusAfterAnswer }: EffectContext) {
  await setAgentState({ status: await statusAfterAnswer() });
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
  bulkRefusal: "a question needs its own answer: answer it on its card",
  summarize: (payload) => summaryOf(String(payload.question ?? "")),
  directions: ["agent_to_lead"],
  outcomes: ["answered", "unanswered"],
  decisionOutcome: (approve) => (approve ? "answered" : "unanswered"),
  waitingStatus: () => "waiting_answer",
  defaultTimeoutSeconds: () => 10 * 60,
  timeout: (_direction, payload) => timeoutOf(payload as QuestionPayload),
  // The newest question is the one the agent waits on; an older one is withdrawn.
  onDuplicatePending: "supersede",
  isFencedToWork: false,
  onApproved: statusAfterAnswer,
  onRejected: statusAfterAnswer,
  onExpired: statusAfterAnswer,
};
