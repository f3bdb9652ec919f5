import { ToolCallView } from "@/components/tool-calls/tool-call-view";
import { Markdown } from "@/components/ui/markdown";
import { TextWarnings, VisibleText } from "@/components/ui/visible-text";
import { combineFlags, inspectMarkdown, inspectText } from "@/lib/shared/display/visible-text";
import type { RequestView } from "@/lib/requests/views";
import { FileDiff } from "./file-diff";
import { QuestionBody } from "./question-card";

/** What the agent asks, in full: the plan, the call and its diff, the question, the reason. */
export function RequestBody({ request }: { request: RequestView }) {
  const payload = request.payload;
  if (request.type === "plan_approval") {
    const plan = String(payload.plan ?? "");
    const summary = typeof payload.summary === "string" ? payload.summary : "";
    return (
      <div className="min-w-0 space-y-2">
        <TextWarnings flags={combineFlags([inspectText(summary), inspectMarkdown(plan)])} />
        {/* The lists show the agent's summary; here it stands beside the plan it claims to sum up. */}
        {summary && (
          <section aria-label="The agent's summary" className="text-sm">
            <h3 className="text-xs font-semibold tracking-wide text-slate-500 uppercase">
              The agent&apos;s summary
            </h3>
            <p>
              <VisibleText text={summary} />
            </p>
          </section>
        )}
        <Markdown source={plan} />
      </div>
    );
  }
  if (request.type === "tool_approval")
    return (
      <div className="min-w-0 space-y-4">
        <ToolCallView payload={payload} />
        <FileDiff payload={payload} />
      </div>
    );
  if (request.type === "question") return <QuestionBody request={request} />;
  const reason = String(payload.reason ?? "The agent asks to stop.");
  return (
    <div className="min-w-0 space-y-2 text-sm">
      <TextWarnings flags={inspectText(reason)} />
      <p>
        <VisibleText text={reason} />
      </p>
    </div>
  );
}
