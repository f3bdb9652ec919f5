"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { queryKeys } from "@/components/realtime/query-keys";
import { ScopeText } from "@/components/rules/scope-text";
import { Button } from "@/components/ui/button";
import { ErrorAlert } from "@/components/ui/error-alert";
import { SelectField } from "@/components/ui/select-field";
import { TextAreaField } from "@/components/ui/text-area-field";
import type { AgentDetail } from "@/lib/agents/views";
import type { RequestView } from "@/lib/requests/views";
import type { RuleScope, RuleViewWire } from "@/lib/shared/api/rule";
import { hasDisplayWarning, inspectValue } from "@/lib/shared/display/visible-text";
import { apiFetch } from "@/lib/shared/http/api-fetch";
import { parseRulePattern, patternForCall } from "@/lib/shared/rules/pattern";

/** Expiry choices, in minutes; 0 is "no expiry". */
export const EXPIRY_CHOICES: readonly [minutes: number, label: string][] = [
  [0, "no expiry"],
  [30, "for 30 minutes"],
  [8 * 60, "for 8 hours"],
  [7 * 24 * 60, "for 7 days"],
];

/**
 * A rule's end as the API takes it: a span the server counts from its own clock, as the computer's
 * may be off by more than the choice (decision 084).
 */
export function ruleEndFor(minutes: number): { expiresAt: null } | { expiresInSeconds: number } {
  return minutes === 0 ? { expiresAt: null } : { expiresInSeconds: minutes * 60 };
}

type Audience = "agent" | "role" | "everyone";

function scopeFor(audience: Audience, agent: string, role: string | undefined): RuleScope | null {
  if (audience === "agent") return { kind: "agent", agent };
  if (audience === "everyone") return { kind: "everyone" };
  return role ? { kind: "role", role } : null;
}

function RuleSuggestion({ requestId }: { requestId: string }) {
  const suggestion = useQuery({
    queryKey: [...queryKeys.rules, "suggestion", requestId],
    queryFn: () =>
      apiFetch<{ approvals: number; isSuggested: boolean }>(
        `/requests/${encodeURIComponent(requestId)}/rule-suggestion`,
      ),
  });
  if (!suggestion.data?.isSuggested) return null;
  return (
    <p className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
      You approved this call {suggestion.data.approvals} times — make it a rule?
    </p>
  );
}

/**
 * "Always allow this" on a tool-approval card: a rule for this agent, its role or everyone, shown
 * with how many past requests it would have matched before it is made. Making it also approves
 * this card, so the call waiting on it runs and the next identical one needs no card.
 */
export function AlwaysAllow({
  request,
  onApprove,
}: {
  request: RequestView;
  onApprove: () => void;
}) {
  const agent = useQuery({
    queryKey: queryKeys.agent(request.agent),
    queryFn: () => apiFetch<AgentDetail>(`/agents/${encodeURIComponent(request.agent)}`),
  });
  // The pattern starts from the session's directory, where rules match a path from.
  if (agent.isPending) return null;
  return <AlwaysAllowForm request={request} agent={agent.data} onApprove={onApprove} />;
}

function AlwaysAllowForm({
  request,
  agent,
  onApprove,
}: {
  request: RequestView;
  agent: AgentDetail | undefined;
  onApprove: () => void;
}) {
  const queryClient = useQueryClient();
  const headingId = useId();
  const payload = request.payload;
  const [pattern, setPattern] = useState(() =>
    patternForCall(String(payload.tool ?? ""), (payload.args ?? {}) as Record<string, unknown>, {
      root: agent?.connector?.cwd,
      cwd: payload.cwd,
    }),
  );
  const [audience, setAudience] = useState<Audience>("agent");
  const [expiryMinutes, setExpiryMinutes] = useState(0);
  const role = agent?.role;
  const scope = scopeFor(audience, request.agent, role);
  const parsed = parseRulePattern(pattern);
  const isUnclear = hasDisplayWarning(inspectValue(payload.args));
  const preview = useQuery({
    queryKey: [...queryKeys.rules, "preview", pattern, scope],
    queryFn: () => apiFetch<{ matches: number }>("/rules/preview", { body: { pattern, scope } }),
    enabled: parsed.ok && scope !== null && !isUnclear,
  });
  const create = useMutation({
    mutationFn: () =>
      apiFetch<RuleViewWire>("/rules", {
        body: { pattern, effect: "allow", scope, ...ruleEndFor(expiryMinutes) },
      }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.rules });
      onApprove();
    },
  });
  if (isUnclear) {
    return (
      <section
        aria-labelledby={headingId}
        className="space-y-2 rounded-lg bg-slate-50 p-4 ring-1 ring-slate-200"
      >
        <h3 id={headingId} className="text-sm font-semibold text-slate-800">
          Always allow this
        </h3>
        <p className="text-sm text-slate-700">
          No rule can be made from this call: its arguments hold characters that do not show as what
          they are (hidden, right-to-left or look-alike). Decide it on its own.
        </p>
      </section>
    );
  }
  return (
    <section
      aria-labelledby={headingId}
      className="space-y-3 rounded-lg bg-slate-50 p-4 ring-1 ring-slate-200"
    >
      <h3 id={headingId} className="text-sm font-semibold text-slate-800">
        Always allow this
      </h3>
      <RuleSuggestion requestId={request.id} />
      {/* Wraps, so the whole pattern is in view: a long command hides nothing at its end. */}
      <TextAreaField
        label="Pattern"
        value={pattern}
        rows={Math.min(6, Math.ceil(pattern.length / 60) + 1)}
        onChange={(event) => setPattern(event.target.value)}
        spellCheck={false}
        aria-describedby={`${headingId}-pattern-hint`}
      />
      <p id={`${headingId}-pattern-hint`} className="text-xs text-slate-600">
        Claude Code notation: Bash(npm test*), write_file(src/**). Every part of a command must
        match.
      </p>
      <fieldset>
        <legend className="text-sm font-medium text-slate-700">For</legend>
        <div className="mt-1 flex flex-wrap gap-4 text-sm text-slate-800">
          {(
            [
              ["agent", request.agent],
              ["role", role ? <ScopeText scope={{ kind: "role", role }} /> : "its role"],
              ["everyone", "everyone"],
            ] as const
          ).map(([value, label]) => (
            <label key={value} className="inline-flex min-w-0 items-center gap-1.5 wrap-anywhere">
              <input
                type="radio"
                name={`${headingId}-audience`}
                value={value}
                checked={audience === value}
                onChange={() => setAudience(value)}
                disabled={value === "role" && !role}
              />
              {/* One flex item, so a role and its plural "s" are not set apart by the gap. */}
              <span>{label}</span>
            </label>
          ))}
        </div>
      </fieldset>
      <SelectField
        label="Expires"
        value={expiryMinutes}
        onChange={(event) => setExpiryMinutes(Number(event.target.value))}
      >
        {EXPIRY_CHOICES.map(([minutes, label]) => (
          <option key={minutes} value={minutes}>
            {label}
          </option>
        ))}
      </SelectField>
      <p role="status" className="text-sm text-slate-700">
        {!parsed.ok
          ? parsed.error
          : preview.data
            ? `Would have matched ${preview.data.matches} past ${preview.data.matches === 1 ? "request" : "requests"}.`
            : "Counting past requests…"}
      </p>
      <ErrorAlert message={create.error?.message ?? preview.error?.message ?? null} />
      <Button
        variant="secondary"
        onClick={() => create.mutate()}
        disabled={!parsed.ok || scope === null || create.isPending}
      >
        Create rule &amp; allow
      </Button>
    </section>
  );
}
