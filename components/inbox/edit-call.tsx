"use client";

import { useEffect, useId, useState } from "react";
import { Button } from "@/components/ui/button";
import { describedByWithWarning, FieldTextWarning } from "@/components/ui/field-text-warning";
import { Markdown } from "@/components/ui/markdown";
import { VisibleText } from "@/components/ui/visible-text";
import { editedPlanOf, MAX_PLAN_LENGTH, toolEditsOf } from "@/lib/shared/protocol/edits";
import { commandFieldOf } from "@/lib/shared/protocol/tool-args";
import type { RequestView } from "@/lib/requests/views";

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function argsOf(request: RequestView): Record<string, unknown> {
  return isRecord(request.payload.args) ? request.payload.args : {};
}

const FIELD_CLASSES =
  "mt-1 block w-full rounded-md border-0 px-3 py-2 font-mono text-sm shadow-sm ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-indigo-600";

/** What the Lead's editor starts from and how its text becomes the decision's edits. */
type Editing = {
  label: string;
  initial: string;
  rows: number;
  /** The decision's fields for this text, or why it cannot be sent. */
  toFields: (text: string) => { fields: Record<string, unknown> } | { error: string };
};

function editingOf(request: RequestView): Editing | null {
  if (request.type === "plan_approval") {
    return {
      label: "Edited plan",
      initial: String(request.payload.plan ?? ""),
      rows: 10,
      toFields: (text) =>
        !text.trim()
          ? { error: "The edited plan cannot be empty." }
          : text.length > MAX_PLAN_LENGTH
            ? { error: `The edited plan is longer than ${MAX_PLAN_LENGTH} characters.` }
            : { fields: { editedPlan: text } },
    };
  }
  if (request.type !== "tool_approval") return null;
  const tool = String(request.payload.tool ?? "");
  const args = argsOf(request);
  const field = commandFieldOf(tool);
  if (field && typeof args[field] === "string") {
    return {
      label: "Edited command",
      initial: String(args[field]),
      rows: 3,
      // Only the command changes; the call's other arguments (its timeout) stay as asked.
      toFields: (text) =>
        text.trim()
          ? { fields: { editedArgs: { ...args, [field]: text } } }
          : { error: "The edited command cannot be empty." },
    };
  }
  return {
    label: "Edited arguments (JSON)",
    initial: JSON.stringify(args, null, 2),
    rows: 8,
    toFields: (text) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        return { error: `Not valid JSON: ${(error as Error).message}` };
      }
      return isRecord(parsed)
        ? { fields: { editedArgs: parsed } }
        : { error: 'The arguments must be a JSON object, like {"path": "notes.txt"}.' };
    },
  };
}

/**
 * "Edit" on a pending plan or tool call: the Lead changes the text (a command, the call's JSON
 * arguments, or the plan) and approves that version instead (docs/decisions/024). The server
 * checks the edits again; its refusal shows where the decision's errors show.
 */
export function EditCall({
  request,
  isDeciding,
  onApproveEdited,
  onEditingChange,
}: {
  request: RequestView;
  isDeciding: boolean;
  onApproveEdited: (fields: Record<string, unknown>) => void;
  /** Told while an edit is open, so the `a` shortcut cannot approve the unedited call. */
  onEditingChange: (isEditing: boolean) => void;
}) {
  const editing = editingOf(request);
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const fieldId = useId();
  const errorId = useId();
  const warningId = useId();
  const isEditing = text !== null;
  useEffect(() => {
    onEditingChange(isEditing);
    return () => onEditingChange(false);
  }, [isEditing, onEditingChange]);
  if (!editing) return null;

  if (text === null) {
    return (
      <Button variant="secondary" onClick={() => setText(editing.initial)} disabled={isDeciding}>
        {request.type === "plan_approval" ? "Edit plan" : "Edit call"}
      </Button>
    );
  }

  function approve() {
    const result = editing!.toFields(text ?? "");
    if ("error" in result) {
      setError(result.error);
      return;
    }
    onApproveEdited(result.fields);
  }

  return (
    <section aria-label="Edit before approving" className="w-full space-y-2">
      <label htmlFor={fieldId} className="block text-sm font-medium text-slate-700">
        {editing.label}
      </label>
      <textarea
        id={fieldId}
        rows={editing.rows}
        value={text}
        spellCheck={false}
        aria-invalid={error !== null}
        aria-describedby={describedByWithWarning(text, warningId, error ? errorId : undefined)}
        onChange={(event) => {
          setText(event.target.value);
          setError(null);
        }}
        onKeyDown={(event) => {
          // Ctrl/⌘+Enter approves the edited version; Escape leaves the field, edit kept, as in
          // every field (it threw the edit away, and `a` then approved the call as asked).
          if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
            event.preventDefault();
            approve();
          }
          if (event.key === "Escape") event.currentTarget.blur();
        }}
        className={FIELD_CLASSES}
      />
      <FieldTextWarning id={warningId} text={text} />
      {error && (
        <p id={errorId} role="alert" className="text-sm text-rose-700">
          {error}
        </p>
      )}
      <div className="flex flex-wrap gap-2">
        <Button onClick={approve} disabled={isDeciding}>
          Approve edited
        </Button>
        <Button
          variant="ghost"
          onClick={() => {
            setText(null);
            setError(null);
          }}
        >
          Cancel edit
        </Button>
      </div>
    </section>
  );
}

/** The Lead's edits in one line, or null when the request was approved as asked. */
export function describeEdits(request: RequestView): string | null {
  const toolEdits = toolEditsOf(request.response);
  if (toolEdits) {
    const field = commandFieldOf(String(request.payload.tool ?? ""));
    const command = field ? toolEdits.editedArgs[field] : undefined;
    return typeof command === "string" ? command : JSON.stringify(toolEdits.editedArgs);
  }
  const plan = editedPlanOf(request.response);
  return plan === null ? null : (plan.split("\n").find((line) => line.trim()) ?? plan);
}

/** On a decided card: what the Lead approved instead of what was asked (shown above it). */
export function ApprovedEdits({ request }: { request: RequestView }) {
  const toolEdits = toolEditsOf(request.response);
  const plan = editedPlanOf(request.response);
  if (!toolEdits && plan === null) return null;
  return (
    <section
      aria-label="Approved with the Lead's edits"
      className="space-y-2 rounded-lg bg-indigo-50 px-4 py-3 ring-1 ring-indigo-200"
    >
      <h3 className="text-sm font-semibold text-indigo-900">
        Approved with the Lead&apos;s edits — this is what runs
      </h3>
      {plan !== null ? (
        <Markdown source={plan} />
      ) : (
        <div className="rounded-md bg-slate-900 px-3 py-2 text-xs text-slate-100">
          <VisibleText text={describeEdits(request) ?? ""} variant="code" />
        </div>
      )}
      <p className="text-xs text-slate-600">The request above shows what the agent asked for.</p>
    </section>
  );
}

/** In a history row: the edited version under the original. */
export function EditedSummary({ request }: { request: RequestView }) {
  const edits = describeEdits(request);
  if (edits === null) return null;
  return (
    <span className="mt-1 block text-xs text-indigo-900">
      <span className="font-medium">Edited by the Lead: </span>
      <VisibleText
        text={edits}
        variant={request.type === "tool_approval" ? "code" : "prose"}
        maxCharacters={160}
      />
    </span>
  );
}
