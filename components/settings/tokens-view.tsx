"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { queryKeys } from "@/components/realtime/query-keys";
import { useSessionUser } from "@/components/session/session-context";
import { Button } from "@/components/ui/button";
import { ErrorAlert } from "@/components/ui/error-alert";
import { apiFetch } from "@/lib/shared/http/api-fetch";
import type { TokenView } from "@/lib/tokens/views";
import { CreateTokenForm } from "./create-token-form";
import { RevokeTokenDialog } from "./revoke-token-dialog";

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

function When({ at, empty }: { at: string | null; empty: string }) {
  if (!at) return <span className="text-slate-500">{empty}</span>;
  return (
    <time dateTime={at} className="whitespace-nowrap tabular-nums">
      {dateTime.format(new Date(at))}
    </time>
  );
}

function TokensTable({
  items,
  isLead,
  onRevoke,
}: {
  items: TokenView[];
  isLead: boolean;
  onRevoke: (token: TokenView) => void;
}) {
  if (items.length === 0) return <p className="text-sm text-slate-600">No tokens yet.</p>;
  return (
    <div className="relative overflow-x-auto rounded-xl bg-white shadow-sm ring-1 ring-slate-200">
      <table className="w-full min-w-[48rem] text-left text-sm">
        <caption className="sr-only">API tokens, newest first</caption>
        <thead className="border-b border-slate-200 bg-slate-50 text-xs font-medium text-slate-600">
          <tr>
            {["Name", "Scope", ...(isLead ? ["Owner"] : []), "Created", "Last used", "Status"].map(
              (heading) => (
                <th key={heading} scope="col" className="px-4 py-2.5">
                  {heading}
                </th>
              ),
            )}
            <th scope="col" className="px-4 py-2.5">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {items.map((token) => (
            <tr key={token.id} data-testid="token-row" data-token-name={token.name}>
              <th scope="row" className="px-4 py-3 font-medium break-all text-slate-900">
                {token.name}
              </th>
              <td className="px-4 py-3 font-mono text-xs">{token.scope}</td>
              {isLead && <td className="px-4 py-3 break-all text-slate-700">{token.ownerEmail}</td>}
              <td className="px-4 py-3 text-slate-700">
                <When at={token.createdAt} empty="—" />
              </td>
              <td className="px-4 py-3 text-slate-700">
                <When at={token.lastUsedAt} empty="never" />
              </td>
              <td className="px-4 py-3" data-testid="token-status">
                {token.revokedAt ? (
                  <span className="text-rose-700">
                    Revoked <When at={token.revokedAt} empty="" />
                  </span>
                ) : (
                  <span className="text-emerald-700">Active</span>
                )}
              </td>
              <td className="px-4 py-3 text-right">
                {!token.revokedAt && (
                  <Button
                    variant="secondary"
                    aria-label={`Revoke ${token.name}`}
                    onClick={() => onRevoke(token)}
                  >
                    Revoke
                  </Button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** API tokens: a Lead sees and manages everyone's, anyone else their own. */
export function TokensView() {
  const user = useSessionUser();
  const isLead = user.role === "lead";
  const [revoking, setRevoking] = useState<TokenView | null>(null);
  const tokens = useQuery({
    queryKey: queryKeys.tokens,
    queryFn: () => apiFetch<{ items: TokenView[] }>("/tokens?limit=200"),
  });
  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-xl font-semibold tracking-tight">Settings</h1>
        <p className="mt-1 text-sm text-slate-600">
          API tokens let scripts, the supervisor and connectors call Handshake. Each has one scope
          and never more than its owner&apos;s role allows.
          {isLead ? " As a Lead you see everyone's tokens." : " You see your own tokens."}
        </p>
      </div>
      <CreateTokenForm />
      <section aria-labelledby="tokens-heading" className="space-y-3">
        <h2 id="tokens-heading" className="text-base font-semibold">
          API tokens
        </h2>
        <ErrorAlert message={tokens.error?.message ?? null} />
        {tokens.data && (
          <TokensTable items={tokens.data.items} isLead={isLead} onRevoke={setRevoking} />
        )}
      </section>
      {revoking && <RevokeTokenDialog token={revoking} onClose={() => setRevoking(null)} />}
    </div>
  );
}
