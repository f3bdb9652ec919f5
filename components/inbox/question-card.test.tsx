import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { RequestView } from "@/lib/requests/views";
import { makeRequestView } from "../../tests/support/request-view";
import { QuestionAnswerForm, QuestionBody } from "./question-card";

const description = `${"x".repeat(900)} END-OF-DESCRIPTION`;

function question(): RequestView {
  return makeRequestView({
    type: "question",
    payload: {
      question: "Which environment should the release notes target?",
      options: [
        { id: "staging", label: "Staging" },
        { id: "production", label: "Production", description },
      ],
    },
    workVersion: null,
    timeoutPolicy: "unanswered",
    responseType: "question_response",
  });
}

describe("a question's options", () => {
  it("never put a 'show all' control inside an answer button", () => {
    // Red team: clicking "show all" to read a long description answered with that option.
    const html = renderToStaticMarkup(
      <QuestionAnswerForm request={question()} isDeciding={false} onAnswer={() => undefined} />,
    );
    const answers = html.match(/<button[^>]*aria-label="Production"[\s\S]*?<\/button>/)?.[0] ?? "";
    expect(answers).toContain("Production");
    expect(answers.slice(1)).not.toMatch(/<button/);
  });

  it("are readable whole, descriptions included, outside the answer buttons", () => {
    const html = renderToStaticMarkup(<QuestionBody request={question()} />);
    const options = /<ul aria-label="Options".*?<\/ul>/s.exec(html)?.[0] ?? "";
    expect(options).toContain("Production");
    expect(options).toMatch(/show all|END-OF-DESCRIPTION/);
  });

  it("name their buttons as they show, hidden characters escaped, and draw no tooltip raw", () => {
    // Red team: a label's U+202E was raw in the button's accessible name, a description's in
    // its tooltip, while the button showed ⟨U+202E⟩.
    const request = makeRequestView({
      ...question(),
      payload: {
        question: "Where to?",
        options: [
          { id: "staging", label: "Staging\u202E", description: "the \u202Esafe one" },
          { id: "production", label: "Production" },
        ],
      },
    });
    const html = renderToStaticMarkup(
      <QuestionAnswerForm request={request} isDeciding={false} onAnswer={() => undefined} />,
    );
    expect(html).toContain('aria-label="Staging⟨U+202E⟩"');
    expect(html).not.toContain("\u202E");
  });
});
