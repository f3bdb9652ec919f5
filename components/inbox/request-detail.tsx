"use client";

import { useQuery } from "@tanstack/react-query";
import { forwardRef, useState, type KeyboardEvent } from "react";
import { queryKeys } from "@/components/realtime/query-keys";
import { AfterFirstRender } from "@/components/ui/after-first-render";
import { Button } from "@/components/ui/button";
import { VisibleText } from "@/components/ui/visible-text";
import { formatAge, formatClock } from "@/components/ui/use-now";
import { describeRequestAnswer } from "@/components/history/request-text";
import { describeOutcome } from "@/lib/shared/display/decided-by";
import { TimelineEntry } from "@/components/timeline/timeline-entry";
import type { AgentDetail } from "@/lib/agents/views";
import type { TimelinePage } from "@/lib/agents/timeline";
import { apiFetch } from "@/lib/shared/http/api-fetch";
import type { QuestionAnswerInput } from "@/lib/shared/protocol/question";
import type { RequestView } from "@/lib/requests/views";
import { AlwaysAllow } from "./always-allow";
import { ApprovalProgress, OWN_APPROVAL_REASON_ID, useHasOwnApproval } from "./approval-progress";
import { AskedAgain } from "./asked-again";
import { requestAge } from "./request-age";
import { CardViewers } from "./card-viewers";
import { ExtendDeadline } from "./extend-deadline";
import { ApprovedEdits, EditCall } from "./edit-call";
import { QuestionAnswerForm } from "./question-card";
import { RequestBody } from "./request-body";
import { typeLabel } from "./request-list";

type Props = {
  request: RequestView;
  now: number;
  canAct: boolean;
  isDeciding: boolean;
  isConflict: boolean;
  isRejecting: boolean;
  decideError: string | null;
  onDecide: (approve: boolean, feedback: string, fields?: Record<string, unknown>) => void;
  onEditingChange: (isEditing: boolean) => void;
};

function DecisionBanner({ request, isConflict }: { request: RequestView; isConflict: boolean }) {
  const when = request.respondedAt ? new Date(request.respondedAt).toLocaleTimeString() : "";
  const answer = describeRequestAnswer(request);
  return (
    <div role="status" className="rounded-lg bg-slate-100 px-4 py-3 text-sm text-slate-800">
      {isConflict && <p className="font-medium text-rose-700">Someone else decided first.</p>}
      <p>
        <span className="font-semibold">{describeOutcome(request)}</span> at {when}
        {request.feedback && (
          <>
            {" — “"}
            <VisibleText text={request.feedback} />”
          </>
        )}
      </p>
      {answer && (
        <p>
          Answer: <VisibleText text={answer} />
        </p>
      )}
    </div>
  );
}

function AgentContext({ name, now }: { name: string; now: number }) {
  const agent = useQuery({
    queryKey: queryKeys.agent(name),
    queryFn: () => apiFetch<AgentDetail>(`/agents/${encodeURIComponent(name)}`),
  });
  if (!agent.data) return null;
  const { status, gate, taskId, workVersion, incarnation, lastHeartbeatAt } = agent.data;
  const facts: [string, string][] = [
    ["Status", status],
    ["Gate", gate],
    ["Task", taskId ?? "none"],
    ["Work version", String(workVersion)],
    ["Incarnation", String(incarnation)],
    [
      "Heartbeat",
      lastHeartbeatAt ? `${formatAge(now - Date.parse(lastHeartbeatAt))} ago` : "never",
    ],
  ];
  return (
    <dl className="grid grid-cols-2 gap-x-4 gap-y-1 text-xs text-slate-600 sm:grid-cols-3">
      {facts.map(([label, value]) => (
        <div key={label}>
          <dt className="inline font-medium">{label} </dt>
          <dd className="inline">{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function RecentActivity({ name }: { name: string }) {
  const timeline = useQuery({
    queryKey: [...queryKeys.timeline(name), "recent"],
    queryFn: () => apiFetch<TimelinePage>(`/agents/${encodeURIComponent(name)}/timeline?limit=5`),
  });
  if (!timeline.data?.items.length) return null;
  return (
    <section aria-label="Recent activity" className="border-t border-slate-200 pt-3">
      <h3 className="mb-2 text-xs font-semibold tracking-wide text-slate-500 uppercase">
        Recent activity
      </h3>
      <ol className="ml-1 border-l border-slate-200">
        {timeline.data.items.map((item) => (
          <TimelineEntry key={item.key} item={item} />
        ))}
      </ol>
    </section>
  );
}

export const RequestDetail = forwardRef<HTMLTextAreaElement, Props>(function RequestDetail(
  {
    request,
    now,
    canAct,
    isDeciding,
    isConflict,
    isRejecting,
    decideError,
    onDecide,
    onEditingChange,
  },
  feedbackRef,
) {
  const [feedback, setFeedback] = useState("");
  const [hint, setHint] = useState<string | null>(null);
  const isPending = request.status === "pending";
  const isQuestion = request.type === "question";
  const hasApproved = useHasOwnApproval(request);

  function answer(input: QuestionAnswerInput) {
    onDecide(true, feedback.trim(), { answer: input });
  }

  function reject() {
    if (!feedback.trim()) {
      setHint(
        isQuestion
          ? "Feedback is required to decline: tell the agent why, or whom to ask."
          : "Feedback is required to reject: tell the agent what to change.",
      );
      return;
    }
    onDecide(false, feedback.trim());
  }

  function onFeedbackKey(event: KeyboardEvent<HTMLTextAreaElement>) {
    // After `r`, Enter sends the rejection; Ctrl/⌘+Enter always does. Shift+Enter adds a line.
    if (
      event.key === "Enter" &&
      !event.shiftKey &&
      (isRejecting || event.ctrlKey || event.metaKey)
    ) {
      event.preventDefault();
      reject();
    }
    if (event.key === "Escape") event.currentTarget.blur();
  }

  return (
    <article
      aria-label={`Request ${request.id}`}
      className="min-w-0 space-y-4 rounded-xl bg-white p-5 shadow-sm ring-1 ring-slate-200"
    >
      <header className="space-y-1">
        <h2 className="text-lg font-semibold wrap-anywhere">
          {typeLabel(request.type)} from {request.agent}
        </h2>
        <p className="text-xs break-all text-slate-500">
          {request.id} · {requestAge(request, now)}
          {isPending &&
            ` · ${request.timeoutPolicy ?? "expires"} in ${formatClock(Date.parse(request.expiresAt) - now)}`}
        </p>
        {isPending && canAct && <ExtendDeadline key={request.expiresAt} request={request} />}
        <AfterFirstRender>
          <CardViewers requestId={request.id} />
          <AgentContext name={request.agent} now={now} />
        </AfterFirstRender>
      </header>
      <AskedAgain request={request} />
      <RequestBody request={request} />
      <ApprovalProgress request={request} />
      <ApprovedEdits request={request} />
      {!isPending && <DecisionBanner request={request} isConflict={isConflict} />}
      {isPending && canAct && (
        <div className="space-y-3 border-t border-slate-200 pt-4">
          {isQuestion && (
            <QuestionAnswerForm request={request} isDeciding={isDeciding} onAnswer={answer} />
          )}
          <div>
            <label htmlFor="decision-feedback" className="block text-sm font-medium text-slate-700">
              Feedback
            </label>
            <textarea
              id="decision-feedback"
              ref={feedbackRef}
              rows={3}
              value={feedback}
              onChange={(event) => {
                setFeedback(event.target.value);
                setHint(null);
              }}
              onKeyDown={onFeedbackKey}
              placeholder={
                isQuestion
                  ? "Optional with an answer, required to decline"
                  : "Optional to approve, required to reject"
              }
              className="mt-1 block w-full rounded-md border-0 px-3 py-2 text-sm shadow-sm ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-indigo-600"
            />
          </div>
          {(hint ?? decideError) && (
            <p role="alert" className="text-sm text-rose-700">
              {hint ?? decideError}
            </p>
          )}
          <div className="flex flex-wrap gap-2">
            {isQuestion ? (
              <Button variant="danger" onClick={reject} disabled={isDeciding}>
                Decline to answer
              </Button>
            ) : (
              <>
                <Button
                  onClick={() => onDecide(true, feedback.trim())}
                  disabled={isDeciding || hasApproved}
                  aria-describedby={hasApproved ? OWN_APPROVAL_REASON_ID : undefined}
                >
                  Approve
                </Button>
                <Button variant="danger" onClick={reject} disabled={isDeciding}>
                  Reject
                </Button>
                {/* Two Leads approve the request as asked (EDITS_NEED_ONE_LEAD). */}
                {request.requiredApprovals < 2 && (
                  <EditCall
                    request={request}
                    isDeciding={isDeciding}
                    onApproveEdited={(fields) => onDecide(true, feedback.trim(), fields)}
                    onEditingChange={onEditingChange}
                  />
                )}
              </>
            )}
          </div>
          {request.type === "tool_approval" && (
            <AlwaysAllow request={request} onApprove={() => onDecide(true, feedback.trim())} />
          )}
        </div>
      )}
      <AfterFirstRender>
        <RecentActivity name={request.agent} />
      </AfterFirstRender>
    </article>
  );
});
