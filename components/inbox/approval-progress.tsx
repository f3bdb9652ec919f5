"use client";

import { useSessionUser } from "@/components/session/session-context";
import type { RequestView } from "@/lib/requests/views";

/** The id of the sentence saying why the Approve button is disabled after one's own approval. */
export const OWN_APPROVAL_REASON_ID = "own-approval-reason";

const timeFormat = new Intl.DateTimeFormat(undefined, { timeStyle: "medium" });

function needsMoreApprovals(request: RequestView): boolean {
  return request.status === "pending" && request.requiredApprovals > 1;
}

/**
 * Whether the signed-in Lead has already approved this pending request: the server counts every
 * session and token of one person as one Lead, so their Approve would be refused anyway.
 */
export function useHasOwnApproval(request: RequestView): boolean {
  const { email } = useSessionUser();
  return (
    needsMoreApprovals(request) && request.approvals.some((approval) => approval.email === email)
  );
}

/** "1 of 2 approvals — waiting for a second Lead", who approved and when; nothing for one-Lead requests. */
export function ApprovalProgress({ request }: { request: RequestView }) {
  const hasApproved = useHasOwnApproval(request);
  if (!needsMoreApprovals(request)) return null;
  const count = request.approvals.length;
  return (
    <section
      aria-label="Approvals"
      className="space-y-1 rounded-lg bg-amber-50 px-4 py-3 text-sm text-amber-950 ring-1 ring-amber-600/20"
    >
      <p role="status" className="font-semibold">
        {count} of {request.requiredApprovals} approvals —{" "}
        {count === 0 ? "two different Leads must approve" : "waiting for a second Lead"}
      </p>
      {count > 0 && (
        <ul className="text-amber-900">
          {request.approvals.map((approval) => (
            <li key={approval.userId}>
              Approved by <span className="font-medium">{approval.email}</span> at{" "}
              <time dateTime={approval.at}>{timeFormat.format(new Date(approval.at))}</time>
            </li>
          ))}
        </ul>
      )}
      {hasApproved && (
        <p id={OWN_APPROVAL_REASON_ID}>
          You approved this request. Another Lead must approve it; you can still reject it.
        </p>
      )}
    </section>
  );
}

/** The list's "1/2": approvals so far of those required, for requests that need two. */
export function ApprovalCount({ request }: { request: RequestView }) {
  if (!needsMoreApprovals(request)) return null;
  const count = request.approvals.length;
  return (
    <span className="rounded bg-amber-100 px-1.5 py-0.5 text-xs font-medium text-amber-900">
      <span aria-hidden="true">
        {count}/{request.requiredApprovals}
      </span>
      <span className="sr-only">
        {count} of {request.requiredApprovals} approvals
      </span>
    </span>
  );
}
