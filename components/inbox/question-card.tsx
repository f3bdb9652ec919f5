"use client";

import { useState, type FormEvent } from "react";
import { Button } from "@/components/ui/button";
import { TextWarnings, VisibleText } from "@/components/ui/visible-text";
import { inspectValue, toVisibleString } from "@/lib/shared/display/visible-text";
import {
  questionPayloadSchema,
  type QuestionAnswerInput,
  type QuestionPayload,
} from "@/lib/shared/protocol/question";
import type { RequestView } from "@/lib/requests/views";

/** The stored payload, re-read at the boundary: an unreadable one renders as a plain question. */
export function readQuestion(request: RequestView): QuestionPayload {
  const parsed = questionPayloadSchema.safeParse(request.payload);
  return parsed.success
    ? parsed.data
    : { question: String(request.payload.question ?? ""), allowText: true };
}

function describeDefault(question: QuestionPayload): string | null {
  if (question.default === undefined) return null;
  const option = question.options?.find((candidate) => candidate.id === question.default);
  return option ? `${option.label} (${option.id})` : question.default;
}

/** What the agent asks: the question, its options, and what stands if nobody answers. */
export function QuestionBody({ request }: { request: RequestView }) {
  const question = readQuestion(request);
  const fallback = describeDefault(question);
  return (
    <div className="min-w-0 space-y-2 text-sm">
      <TextWarnings flags={inspectValue(request.payload)} />
      <p className="text-base font-medium">
        <VisibleText text={question.question} />
      </p>
      {/* Read here, whole: inside an answer button, a "show all" click would answer with it. */}
      {question.options && (
        <ul aria-label="Options" className="list-inside list-disc text-slate-700">
          {question.options.map((option) => (
            <li key={option.id}>
              <VisibleText text={option.label} />
              {option.description && (
                <span className="text-slate-600">
                  {" — "}
                  <VisibleText text={option.description} />
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
      <p className="text-xs text-slate-600">
        {fallback ? (
          <>
            Default if unanswered: <VisibleText text={fallback} />
          </>
        ) : (
          "No default: if nobody answers in time, it goes unanswered."
        )}
      </p>
    </div>
  );
}

/**
 * One button per option (the keys 1–9 press them from anywhere in the inbox), and a text box when
 * the question takes a free answer.
 */
export function QuestionAnswerForm({
  request,
  isDeciding,
  onAnswer,
}: {
  request: RequestView;
  isDeciding: boolean;
  onAnswer: (answer: QuestionAnswerInput) => void;
}) {
  const question = readQuestion(request);
  const [text, setText] = useState("");

  function sendText(event: FormEvent) {
    event.preventDefault();
    if (text.trim()) onAnswer({ text: text.trim() });
  }

  return (
    <div className="space-y-3">
      {question.options && (
        <div role="group" aria-label="Answer with an option" className="flex flex-wrap gap-2">
          {question.options.map((option, index) => (
            <Button
              key={option.id}
              variant="secondary"
              disabled={isDeciding}
              onClick={() => onAnswer({ option: option.id })}
              // Named by the label alone, as it shows: the key hint and description are
              // decoration around it. No tooltip: it would draw the description raw, and the
              // options' list above shows it whole.
              aria-label={toVisibleString(option.label)}
              aria-keyshortcuts={String(index + 1)}
              className="flex-col items-start"
            >
              <span>
                <kbd className="mr-1.5 rounded bg-slate-100 px-1 text-xs text-slate-600">
                  {index + 1}
                </kbd>
                <VisibleText text={option.label} canExpand={false} />
              </span>
              {option.description && (
                <span className="text-xs font-normal text-slate-600">
                  <VisibleText text={option.description} canExpand={false} />
                </span>
              )}
            </Button>
          ))}
        </div>
      )}
      {question.allowText && (
        <form onSubmit={sendText} className="space-y-1">
          <label htmlFor="question-answer" className="block text-sm font-medium text-slate-700">
            Your answer
          </label>
          <div className="flex gap-2">
            <input
              id="question-answer"
              value={text}
              onChange={(event) => setText(event.target.value)}
              onKeyDown={(event) => event.key === "Escape" && event.currentTarget.blur()}
              maxLength={10_000}
              className="block w-full rounded-md border-0 px-3 py-2 text-sm shadow-sm ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-indigo-600"
            />
            <Button type="submit" disabled={isDeciding || !text.trim()}>
              Send answer
            </Button>
          </div>
        </form>
      )}
    </div>
  );
}
