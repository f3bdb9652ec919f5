import { z } from "zod";

// The question type's shapes (docs/PROTOCOL.md, "The question type"): what an agent asks, what the
// Lead answers and what the agent is told. Shared by the server's definition
// (lib/protocol/question.ts), the console's card, the workers' ask_lead tool, and the SDK and CLI.

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

/** One line for an agent or a terminal: what the answer says. */
export function describeAnswer(answer: QuestionAnswer): string {
  const chosen =
    answer.option === null ? null : `${answer.label ?? answer.option} (${answer.option})`;
  return [chosen, answer.text].filter((part) => part !== null).join(": ");
}
