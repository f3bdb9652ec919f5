import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { SessionProvider } from "@/components/session/session-context";
import type { RequestView } from "@/lib/requests/views";
import { makeRequestView } from "../../tests/support/request-view";
import { ApprovalCount, ApprovalProgress, OWN_APPROVAL_REASON_ID } from "./approval-progress";

const ada = { userId: "u-ada", name: "Ada", email: "ada@example.com", at: "2026-11-30T12:00:00Z" };

function request(overrides: Partial<RequestView> = {}): RequestView {
  return makeRequestView({
    type: "tool_approval",
    timeoutPolicy: "auto-denies",
    responseType: "tool_approval_response",
    requiredApprovals: 2,
    ...overrides,
  });
}

function render(view: RequestView, email = "bob@example.com"): string {
  return renderToStaticMarkup(
    <SessionProvider user={{ email, name: email, role: "lead" }}>
      <ApprovalProgress request={view} />
      <ApprovalCount request={view} />
    </SessionProvider>,
  );
}

const text = (html: string) => html.replace(/<[^>]+>/g, "");

describe("ApprovalProgress and ApprovalCount", () => {
  it("show nothing for a request one Lead decides, or one already decided", () => {
    expect(render(request({ requiredApprovals: 1 }))).toBe("");
    expect(render(request({ status: "approved", approvals: [ada] }))).toBe("");
  });

  it("say that two Leads must approve before anyone has", () => {
    expect(text(render(request()))).toContain(
      "0 of 2 approvals — two different Leads must approve",
    );
  });

  it("name who approved and wait for a second Lead", () => {
    const html = render(request({ approvals: [ada] }));
    expect(text(html)).toContain("1 of 2 approvals — waiting for a second Lead");
    expect(text(html)).toContain("Approved by ada@example.com at");
    expect(text(html)).toContain("1/2");
    expect(text(html)).toContain("1 of 2 approvals");
    expect(html).not.toContain(OWN_APPROVAL_REASON_ID);
  });

  it("tell the Lead who approved why their Approve is disabled", () => {
    const html = render(request({ approvals: [ada] }), ada.email);
    expect(html).toContain(`id="${OWN_APPROVAL_REASON_ID}"`);
    expect(text(html)).toContain("You approved this request. Another Lead must approve it");
  });
});
