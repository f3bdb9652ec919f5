import { TextWarnings, VisibleText } from "@/components/ui/visible-text";
import {
  combineFlags,
  inspectMarkdown,
  inspectValue,
  type VisibleTextFlags,
} from "@/lib/shared/display/visible-text";
import { describeAnswer, questionResponseSchema } from "@/lib/shared/protocol/question";
import type { RequestView } from "@/lib/requests/views";

const TYPE_LABELS: Record<string, string> = {
  plan_approval: "Plan",
  tool_approval: "Risky tool call",
  shutdown: "Shutdown",
  question: "Question",
};

export function describeRequestType(type: string): string {
  return TYPE_LABELS[type] ?? type.replaceAll("_", " ");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A tool call in one line: the command or path when there is one, else the arguments. */
function summarizeToolCall(payload: Record<string, unknown>): string {
  const tool = typeof payload.tool === "string" ? payload.tool : "";
  const args = isRecord(payload.args) ? payload.args : {};
  const subject = [args.command, args.path].find((value) => typeof value === "string");
  return `${tool} ${typeof subject === "string" ? subject : JSON.stringify(args)}`;
}

/** The answer a decided question carries, in one line; null when it has none. */
export function describeRequestAnswer(request: RequestView): string | null {
  const parsed = questionResponseSchema.safeParse(request.response);
  return parsed.success ? describeAnswer(parsed.data.answer) : null;
}

/**
 * What was asked: the plan's summary, the tool call, the reason to stop. Agent-written, so it is
 * shown with VisibleText (escaped, wrapped, collapsed with both ends kept), never cut off.
 */
export function summarizeRequest(request: RequestView): string {
  const { payload } = request;
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  switch (request.type) {
    case "plan_approval":
      return text(payload.summary) || text(payload.plan).split("\n").find(Boolean) || "";
    case "tool_approval":
      return summarizeToolCall(payload);
    case "shutdown":
      return text(payload.reason) || (request.sender === "lead" ? "Lead asks it to stop" : "");
    case "question": {
      const answer = describeRequestAnswer(request);
      const asked = text(payload.question);
      return answer ? `${asked} → ${answer}` : asked;
    }
    default:
      return "";
  }
}

export const OUTCOME_STYLES: Record<string, string> = {
  pending: "bg-amber-50 text-amber-800 ring-amber-600/20",
  approved: "bg-emerald-50 text-emerald-800 ring-emerald-600/20",
  rejected: "bg-rose-50 text-rose-800 ring-rose-600/20",
  expired: "bg-orange-50 text-orange-800 ring-orange-600/20",
  answered: "bg-emerald-50 text-emerald-800 ring-emerald-600/20",
  unanswered: "bg-orange-50 text-orange-800 ring-orange-600/20",
  cancelled: "bg-slate-100 text-slate-700 ring-slate-500/20",
  superseded: "bg-slate-100 text-slate-700 ring-slate-500/20",
};

export function OutcomeBadge({ status }: { status: string }) {
  return (
    <span
      className={`inline-flex items-center rounded-md px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${OUTCOME_STYLES[status] ?? OUTCOME_STYLES.cancelled}`}
    >
      {status}
    </span>
  );
}

/** A plan's flags count its markdown as rendered: `&#x202E;` is the character on the page. */
function flagsOfRequest(request: RequestView): VisibleTextFlags {
  const flags = inspectValue(request.payload);
  const plan = request.type === "plan_approval" ? request.payload.plan : undefined;
  return typeof plan === "string" ? combineFlags([flags, inspectMarkdown(plan)]) : flags;
}

/** Characters of a summary shown before "show all": enough for a command's head and tail. */
const SUMMARY_CHARACTERS = 160;

/**
 * The summary line every list shows (inbox, team board, timeline, history), with the card's
 * warnings for everything the agent sent, not only the part in the summary.
 */
export function RequestSummary({
  request,
  isInsideControl = false,
  className = "",
}: {
  request: RequestView;
  /** In a list item that is a button: no nested controls, only phrasing content. */
  isInsideControl?: boolean;
  className?: string;
}) {
  const summary = summarizeRequest(request);
  return (
    <span className={`flex min-w-0 flex-col gap-1 ${className}`}>
      <TextWarnings flags={flagsOfRequest(request)} isCompact />
      {summary && (
        <VisibleText
          text={summary}
          variant={request.type === "tool_approval" ? "code" : "prose"}
          maxCharacters={SUMMARY_CHARACTERS}
          maxLines={4}
          canExpand={!isInsideControl}
          className="block"
        />
      )}
    </span>
  );
}
