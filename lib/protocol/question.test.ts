import { describe, expect, it } from "vitest";
import { AppError } from "../errors";
import { describeAnswer, questionPayloadSchema } from "../shared/protocol/question";
import { question, resolveAnswer } from "./question";

const payload = questionPayloadSchema.parse({
  question: "Where?",
  options: [
    { id: "staging", label: "Staging" },
    { id: "production", label: "Production" },
  ],
  default: "staging",
});

describe("the question type", () => {
  it("resolves an option to its label, and refuses one that does not exist", () => {
    expect(resolveAnswer(payload, { option: "production" })).toEqual({
      option: "production",
      label: "Production",
      text: null,
    });
    expect(() => resolveAnswer(payload, { option: "moon" })).toThrow(AppError);
    expect(() => resolveAnswer(payload, { text: "anywhere" })).toThrow(/not a text/);
  });

  it("times out to its default, as an option or as a text, else unanswered", () => {
    expect(question.timeout("agent_to_lead", payload)).toEqual({
      policy: "answer_default",
      outcome: "answered",
      response: { answer: { option: "staging", label: "Staging", text: null } },
    });
    const free = { question: "Which region?", allowText: true, default: "eu-west-1" };
    expect(question.timeout("agent_to_lead", free).response).toEqual({
      answer: { option: null, label: null, text: "eu-west-1" },
    });
    expect(question.timeout("agent_to_lead", { question: "?", allowText: true })).toEqual({
      policy: "unanswered",
      outcome: "unanswered",
    });
  });

  it("describes an answer in one line", () => {
    expect(describeAnswer({ option: "staging", label: "Staging", text: "after 5pm" })).toBe(
      "Staging (staging): after 5pm",
    );
    expect(describeAnswer({ option: null, label: null, text: "eu-west-1" })).toBe("eu-west-1");
  });
});
