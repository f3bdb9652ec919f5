import type { PendingRequestSummary } from "@/lib/requests/data";

export function InboxView({ requests }: { requests: PendingRequestSummary[] }) {
  return (
    <section aria-labelledby="inbox-heading">
      <h1 id="inbox-heading" className="text-2xl font-semibold tracking-tight">
        Approval inbox
      </h1>
      {requests.length === 0 ? (
        <div className="mt-6 rounded-xl border border-dashed border-slate-300 bg-white p-10 text-center">
          <p className="text-base font-medium">No requests are waiting for you.</p>
          <p className="mt-1 text-sm text-slate-600">
            When an agent asks to approve a plan, run a risky tool or stop, it appears here.
          </p>
        </div>
      ) : (
        <ul className="mt-6 divide-y divide-slate-200 rounded-xl bg-white shadow-sm ring-1 ring-slate-200">
          {requests.map((request) => (
            <li key={request.id} className="flex items-center gap-4 px-4 py-3 text-sm">
              <span className="font-medium">{request.sender}</span>
              <span className="text-slate-600">{request.type}</span>
              <time className="ml-auto text-slate-500" dateTime={request.createdAt.toISOString()}>
                {request.createdAt.toLocaleTimeString()}
              </time>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
