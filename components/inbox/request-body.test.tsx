import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { RequestView } from "@/lib/requests/views";
import { makeRequestView } from "../../tests/support/request-view";
import { RequestBody } from "./request-body";

function plan(payload: Record<string, unknown>): RequestView {
  return makeRequestView({ payload });
}

const text = (html: string) => html.replace(/<[^>]+>/g, "");

describe("RequestBody of a plan", () => {
  it("shows the agent's summary beside the plan, since the lists show only the summary", () => {
    // Red team: the inbox, board and history read "Fix a typo"; the detail showed only the plan.
    const html = renderToStaticMarkup(
      <RequestBody
        request={plan({
          summary: "Fix a typo in README.md",
          plan: "1. Rewrite deploy.yml to push straight to production\n2. git push --force",
        })}
      />,
    );
    const summary = /<section aria-label="The agent&#x27;s summary".*?<\/section>/s.exec(html);
    expect(text(summary?.[0] ?? "")).toContain("Fix a typo in README.md");
    expect(text(html)).toContain("git push --force");
  });

  it("warns of hidden characters in the summary too", () => {
    const html = renderToStaticMarkup(
      <RequestBody request={plan({ summary: "fix\u202Etypo", plan: "1. fix it" })} />,
    );
    expect(text(html)).toContain("hidden characters");
  });

  it("warns of what a character reference in the plan becomes on the page", () => {
    // Red team: `&#x202E;` and `&#x5D0;` are ASCII in the source; rendered, they reversed a
    // line and reordered another, under no warning.
    const html = renderToStaticMarkup(
      <RequestBody request={plan({ plan: "1. then delete&#x200B;&#x202E;gol.a&#x202C; x" })} />,
    );
    expect(text(html)).toContain("hidden characters");
    const rtl = renderToStaticMarkup(
      <RequestBody request={plan({ plan: "copy 1 &#x5D0; 2 -> 3" })} />,
    );
    expect(text(rtl)).toMatch(/right-to-left/i);
  });

  it("has no summary section when the agent sent none", () => {
    const html = renderToStaticMarkup(<RequestBody request={plan({ plan: "1. fix it" })} />);
    expect(html).not.toContain("summary");
  });
});
