"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { EXPIRY_CHOICES, ruleEndFor } from "@/components/inbox/always-allow";
import { queryKeys } from "@/components/realtime/query-keys";
import { useSessionUser } from "@/components/session/session-context";
import { Button } from "@/components/ui/button";
import { ErrorAlert } from "@/components/ui/error-alert";
import { useNow } from "@/components/ui/use-now";
import { VisibleText } from "@/components/ui/visible-text";
import { RULE_EFFECTS, RULE_MODES, type RuleViewWire } from "@/lib/shared/api/rule";
import { toVisibleString } from "@/lib/shared/display/visible-text";
import { apiFetch } from "@/lib/shared/http/api-fetch";
import { ScopeText, describeScope } from "./scope-text";

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

const selectClass =
  "rounded-md border-0 bg-white py-1.5 pr-8 pl-2 text-sm text-slate-900 ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-indigo-600 disabled:bg-slate-50";

/** One rule: its pattern shown as a card shows the text it runs, its controls named by it. */
export function RuleRow({
  rule,
  canEdit,
  now,
}: {
  rule: RuleViewWire;
  canEdit: boolean;
  now: number;
}) {
  const queryClient = useQueryClient();
  const change = useMutation({
    mutationFn: (patch: Record<string, unknown> | null) =>
      patch === null
        ? apiFetch<RuleViewWire>(`/rules/${rule.id}`, { method: "DELETE" })
        : apiFetch<RuleViewWire>(`/rules/${rule.id}`, { method: "PATCH", body: patch }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.rules }),
  });
  const isExpired = rule.expiresAt !== null && Date.parse(rule.expiresAt) <= now;
  const shownPattern = toVisibleString(rule.pattern);
  const label = `rule ${shownPattern} for ${describeScope(rule.scope)}`;
  return (
    <tr data-testid="rule-row" data-rule-pattern={shownPattern}>
      <th scope="row" className="px-4 py-3 font-mono text-xs break-all text-slate-900">
        <VisibleText text={rule.pattern} variant="code" />
        <ErrorAlert message={change.error?.message ?? null} className="mt-2 font-sans" />
      </th>
      <td className="px-4 py-3 text-slate-700">
        <ScopeText scope={rule.scope} />
      </td>
      <td className="px-4 py-3">
        <select
          aria-label={`Effect of ${label}`}
          className={selectClass}
          value={rule.effect}
          disabled={!canEdit || change.isPending}
          onChange={(event) => change.mutate({ effect: event.target.value })}
        >
          {RULE_EFFECTS.map((effect) => (
            <option key={effect} value={effect}>
              {effect}
            </option>
          ))}
        </select>
        {rule.requiredApprovals === 2 && (
          <span className="ml-2 text-xs text-slate-600">two Leads</span>
        )}
      </td>
      <td className="px-4 py-3">
        <select
          aria-label={`Mode of ${label}`}
          className={selectClass}
          value={rule.mode}
          disabled={!canEdit || change.isPending}
          onChange={(event) => change.mutate({ mode: event.target.value })}
        >
          {RULE_MODES.map((mode) => (
            <option key={mode} value={mode}>
              {mode}
            </option>
          ))}
        </select>
      </td>
      <td className="px-4 py-3 text-slate-700">
        <p data-testid="rule-expiry" className={isExpired ? "text-rose-700" : undefined}>
          {rule.expiresAt
            ? `${isExpired ? "expired" : "until"} ${dateTime.format(new Date(rule.expiresAt))}`
            : "no expiry"}
        </p>
        {canEdit && (
          <select
            aria-label={`New expiry of ${label}`}
            className={`${selectClass} mt-1`}
            value=""
            disabled={change.isPending}
            onChange={(event) => change.mutate(ruleEndFor(Number(event.target.value)))}
          >
            <option value="" disabled>
              Change expiry…
            </option>
            {EXPIRY_CHOICES.map(([minutes, choice]) => (
              <option key={minutes} value={minutes}>
                {choice}
              </option>
            ))}
          </select>
        )}
      </td>
      <td className="px-4 py-3 text-xs text-slate-600">{rule.createdBy}</td>
      <td className="px-4 py-3 text-right">
        {canEdit && (
          <Button
            variant="secondary"
            aria-label={`Delete ${label}`}
            disabled={change.isPending}
            onClick={() => change.mutate(null)}
          >
            Delete
          </Button>
        )}
      </td>
    </tr>
  );
}

/** Rules the gate applies before a person is asked; the Lead edits and deletes them here. */
export function RulesView() {
  const user = useSessionUser();
  const canEdit = user.role === "lead";
  const now = useNow(30_000);
  const rules = useQuery({
    queryKey: queryKeys.rules,
    queryFn: () => apiFetch<{ items: RuleViewWire[] }>("/rules"),
  });
  const items = rules.data?.items ?? [];
  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-xl font-semibold tracking-tight">Rules</h1>
        <p className="mt-1 text-sm text-slate-600">
          The gate applies these before asking you: deny beats ask beats allow, an allow covers a
          command only when every part of it matches, and shadow rules only record what they would
          have done. Make one from a tool call&apos;s card with &ldquo;Always allow this&rdquo;.
        </p>
      </div>
      <ErrorAlert message={rules.error?.message ?? null} />
      {rules.data && items.length === 0 && <p className="text-sm text-slate-600">No rules yet.</p>}
      {items.length > 0 && (
        <div className="relative overflow-x-auto rounded-xl bg-white shadow-sm ring-1 ring-slate-200">
          <table className="w-full min-w-[56rem] text-left text-sm">
            <caption className="sr-only">Rules, newest first</caption>
            <thead className="border-b border-slate-200 bg-slate-50 text-xs font-medium text-slate-600">
              <tr>
                {["Pattern", "For", "Effect", "Mode", "Expiry", "Made by"].map((heading) => (
                  <th key={heading} scope="col" className="px-4 py-2.5">
                    {heading}
                  </th>
                ))}
                <th scope="col" className="px-4 py-2.5">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {items.map((rule) => (
                <RuleRow key={rule.id} rule={rule} canEdit={canEdit} now={now} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
