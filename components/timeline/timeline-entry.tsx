import type { ReactNode } from "react";
import {
  describeRequestAnswer,
  describeRequestType,
  RequestSummary,
  summarizeRequest,
} from "@/components/history/request-text";
import { describeStatus } from "@/lib/shared/agents/schema";
import { TextWarnings, VisibleText } from "@/components/ui/visible-text";
import { describeOutcome } from "@/lib/shared/display/decided-by";
import { inspectValue } from "@/lib/shared/display/visible-text";
import type { TimelineItem } from "@/lib/agents/timeline";

const MESSAGE_LABELS: Record<string, string> = {
  message: "Message",
  broadcast: "Broadcast",
  plan_request: "Plan requested",
  plan_approval: "Plan sent for approval",
  plan_approval_response: "Plan decision",
  tool_approval: "Tool approval asked",
  tool_approval_response: "Tool approval decision",
  shutdown: "Shutdown request",
  shutdown_response: "Shutdown answer",
};

const DOTS = {
  neutral: "bg-slate-400",
  info: "bg-sky-500",
  message: "bg-indigo-500",
  waiting: "bg-amber-500",
  good: "bg-emerald-500",
  bad: "bg-rose-500",
} as const;
type Tone = keyof typeof DOTS;

const OUTCOME_TONES: Record<string, Tone> = {
  approved: "good",
  rejected: "bad",
  expired: "bad",
  answered: "good",
  unanswered: "bad",
  cancelled: "neutral",
  superseded: "neutral",
};

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

/** Arguments in one line, e.g. `path: hello.txt`; VisibleText collapses it keeping both ends. */
function summarizeArgs(args: Record<string, unknown>): string {
  return Object.entries(args)
    .map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(", ");
}

function describe(item: TimelineItem): { tone: Tone; title: string; body?: ReactNode } {
  switch (item.kind) {
    case "message": {
      const { message } = item;
      // Still unread when the incarnation it was sent to ended: it reached nobody.
      const undelivered = message.cancelledAt ? " · not delivered" : "";
      return {
        tone: message.cancelledAt ? "neutral" : "message",
        title: `${MESSAGE_LABELS[message.type] ?? message.type} · ${message.from} → ${message.to}${undelivered}`,
        body: message.content ? (
          <>
            <TextWarnings flags={inspectValue(message.content)} isCompact />
            <p className="text-slate-700">
              <VisibleText text={message.content} maxCharacters={400} maxLines={6} />
            </p>
          </>
        ) : undefined,
      };
    }
    case "tool_call": {
      const { toolCall } = item;
      return {
        tone: toolCall.isAllowed ? "neutral" : "bad",
        title: `Tool call ${toolCall.isAllowed ? "allowed" : "blocked"}: ${toolCall.tool}`,
        body: (
          <>
            <TextWarnings flags={inspectValue(toolCall.args)} isCompact />
            {!toolCall.isAllowed && (
              <p className="text-slate-700">
                {toolCall.code && (
                  <code className="mr-2 rounded bg-rose-50 px-1.5 py-0.5 font-mono text-xs text-rose-800">
                    {toolCall.code}
                  </code>
                )}
                {toolCall.reason && <VisibleText text={toolCall.reason} maxCharacters={300} />}
              </p>
            )}
            {Object.keys(toolCall.args).length > 0 && (
              <p className="text-xs text-slate-500">
                <VisibleText
                  text={summarizeArgs(toolCall.args)}
                  variant="code"
                  maxCharacters={160}
                />
              </p>
            )}
          </>
        ),
      };
    }
    case "request": {
      const { request } = item;
      const type = describeRequestType(request.type);
      if (item.action === "created") {
        return {
          tone: "waiting",
          title: request.sender === "lead" ? `${type} requested by the Lead` : `${type} submitted`,
          body: summarizeRequest(request) ? (
            <RequestSummary request={request} className="text-slate-700" />
          ) : undefined,
        };
      }
      const answer = describeRequestAnswer(request);
      return {
        tone: OUTCOME_TONES[request.status] ?? "neutral",
        title: `${type} ${describeOutcome(request)}`,
        body:
          answer || request.feedback ? (
            <>
              {answer && (
                <p className="text-slate-700">
                  Answer: <VisibleText text={answer} maxCharacters={400} maxLines={6} />
                </p>
              )}
              {request.feedback && (
                <blockquote className="border-l-2 border-slate-200 pl-3 text-slate-700">
                  <VisibleText text={request.feedback} maxCharacters={400} maxLines={6} />
                </blockquote>
              )}
            </>
          ) : undefined,
      };
    }
    case "status": {
      const { change } = item;
      const incarnation = change.incarnation === null ? "" : ` #${change.incarnation}`;
      switch (change.event) {
        case "registered":
          return { tone: "info", title: `Registered as incarnation${incarnation}` };
        case "respawned":
          return { tone: "info", title: `Respawned as incarnation${incarnation}` };
        case "stopped":
          return {
            tone: change.isForced ? "bad" : "neutral",
            title: `Stopped${change.isForced ? " (forced)" : ""}: ${change.status ? describeStatus(change.status) : "ended"}`,
            body: change.reason ? (
              <p className="text-slate-700">
                <VisibleText text={change.reason} maxCharacters={300} />
              </p>
            ) : undefined,
          };
        case "updated":
          return {
            tone: "info",
            title: `Status: ${change.status ? describeStatus(change.status) : "unchanged"}${change.gate ? ` · gate ${change.gate.replaceAll("_", " ")}` : ""}`,
          };
        default: {
          const unreachable: never = change.event;
          return unreachable;
        }
      }
    }
    default: {
      const unreachable: never = item;
      return unreachable;
    }
  }
}

export function TimelineEntry({ item }: { item: TimelineItem }) {
  const { tone, title, body } = describe(item);
  return (
    <li className="relative pb-5 pl-6 last:pb-0" data-kind={item.kind}>
      <span
        aria-hidden
        className={`absolute top-1.5 -left-[5px] h-2.5 w-2.5 rounded-full ring-4 ring-white ${DOTS[tone]}`}
      />
      <div className="flex flex-wrap items-baseline gap-x-3 gap-y-0.5">
        <p className="min-w-0 text-sm font-medium break-words text-slate-900">{title}</p>
        <time
          dateTime={item.at}
          className="ml-auto text-xs whitespace-nowrap text-slate-500 tabular-nums"
        >
          {timeFormat.format(new Date(item.at))}
        </time>
      </div>
      {body && <div className="mt-1 space-y-1 text-sm">{body}</div>}
    </li>
  );
}
