"use client";

import { TextWarnings, VisibleText } from "@/components/ui/visible-text";
import {
  buildToolCallCard,
  describeJoiner,
  type ShellCardLine,
  type ToolCallCard,
  type ToolCallCardReason,
} from "@/lib/shared/display/tool-call-card";
import { inspectValue, toVisibleString } from "@/lib/shared/display/visible-text";
import { isDiffShown } from "@/lib/shared/protocol/file-change";
import type { ToolRiskClass } from "@/lib/shared/protocol/tool-risk";

const CLASS_STYLES: Record<ToolRiskClass, string> = {
  read_only: "bg-emerald-50 text-emerald-800 ring-emerald-600/20",
  workspace: "bg-slate-100 text-slate-700 ring-slate-500/20",
  needs_approval: "bg-amber-50 text-amber-900 ring-amber-600/30",
  refused: "bg-rose-50 text-rose-800 ring-rose-600/20",
};

export function RiskBadge({ riskClass }: { riskClass: ToolRiskClass }) {
  return (
    <span
      className={`inline-flex shrink-0 items-center rounded-md px-1.5 py-0.5 text-xs font-medium ring-1 ring-inset ${CLASS_STYLES[riskClass]}`}
    >
      {riskClass.replaceAll("_", " ")}
    </span>
  );
}

/**
 * A command's own line is never collapsed, nor a part of the command on no line (a `for` list, a
 * `case` subject): what the middle of one command does is what the Lead approves, and a "show all"
 * there is one click the Lead may not make.
 */
const WHOLE = { maxCharacters: Infinity, maxLines: Infinity } as const;

function ReasonList({ reasons, label }: { reasons: ToolCallCardReason[]; label: string }) {
  if (reasons.length === 0) return null;
  return (
    <ul aria-label={label} className="space-y-1">
      {reasons.map((reason, index) => (
        <li key={index} className="flex min-w-0 items-start gap-2 text-xs text-slate-700">
          <RiskBadge riskClass={reason.class} />
          <span className="min-w-0 space-y-0.5 pt-0.5">
            <VisibleText text={reason.message} />
            {reason.excerpt !== undefined && (
              <VisibleText text={reason.excerpt} variant="code" className="block" {...WHOLE} />
            )}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** More rows than this in one command's line, and the card says how many: all of them run. */
const TALL_LINE_ROWS = 24;

function LineContext({ line }: { line: ShellCardLine }) {
  const rows = line.text.split("\n").length;
  const notes = [
    rows > TALL_LINE_ROWS && `one command of ${rows} lines: every one of them runs`,
    line.isPiped && "reads the previous command's output",
    line.isInSubstitution && "inside $(…): its output becomes part of another command",
    line.isInSubshell && "in a subshell",
    line.inFunction !== null &&
      `in function ${toVisibleString(line.inFunction)}: runs when it is called`,
    line.isBackground && "runs in the background",
  ].filter((note): note is string => Boolean(note));
  if (notes.length === 0) return null;
  return (
    <p className="text-xs wrap-anywhere text-slate-500 italic [unicode-bidi:isolate]">
      {notes.join(" · ")}
    </p>
  );
}

function ShellLine({ line }: { line: ShellCardLine }) {
  return (
    <li
      data-shell-line
      className={`min-w-0 space-y-1.5 ${line.isInSubstitution || line.inFunction !== null ? "ml-4 border-l-2 border-slate-200 pl-3" : ""}`}
    >
      <LineContext line={line} />
      <div className="rounded-md bg-slate-900 px-3 py-2 text-xs text-slate-100">
        <VisibleText text={line.text} variant="code" {...WHOLE} />
      </div>
      {line.redirects.length > 0 && (
        <ul aria-label="Redirections" className="flex flex-wrap gap-1.5">
          {line.redirects.map((redirect, index) => (
            <li
              key={index}
              className="min-w-0 rounded-md bg-sky-50 px-1.5 py-0.5 text-xs text-sky-900 ring-1 ring-sky-600/20 ring-inset"
            >
              redirect{" "}
              <VisibleText
                variant="code"
                text={`${redirect.descriptor ?? ""}${redirect.operator} ${redirect.target}`}
                {...WHOLE}
              />
            </li>
          ))}
        </ul>
      )}
      <ReasonList reasons={line.reasons} label="Why this part is risky" />
      {line.joiner && (
        <p className="text-xs font-medium text-slate-600">
          <code className="mr-1.5 rounded bg-slate-100 px-1 font-mono text-slate-900">
            {line.joiner === "newline" ? "↵" : line.joiner}
          </code>
          {describeJoiner(line.joiner)}
        </p>
      )}
    </li>
  );
}

/** The bash command as the gate parsed it: one line per simple command, in source order. */
export function ShellCommandView({ shell }: { shell: NonNullable<ToolCallCard["shell"]> }) {
  return (
    <section aria-label="Parsed command" className="min-w-0 space-y-2">
      <h3 className="text-xs font-semibold tracking-wide text-slate-500 uppercase">
        What will run
      </h3>
      {shell.isSourceMismatch && (
        <p role="note" className="text-xs font-medium text-rose-700">
          The stored parse is of a different command than the arguments below: do not approve.
        </p>
      )}
      {shell.problems.length > 0 && (
        <ul aria-label="Parse problems" className="text-xs text-rose-700">
          {shell.problems.map((problem, index) => (
            <li key={index}>
              <VisibleText text={`Cannot be parsed reliably: ${problem}`} />
            </li>
          ))}
        </ul>
      )}
      <ol className="space-y-3">
        {shell.lines.map((line, index) => (
          <ShellLine key={index} line={line} />
        ))}
      </ol>
    </section>
  );
}

/**
 * A value no other part of the card shows whole (a parsed command's lines, a diff) is itself what
 * the call does: it stays whole like a command's line, up to a size a page still draws at once.
 * Past that the collapse says how long it is.
 */
const UNSHOWN_VALUE = { maxCharacters: 20_000, maxLines: Infinity } as const;

/** Arguments as key → value, each value wrapped and escaped; never a box that scrolls sideways. */
export function ToolArgs({
  args,
  isShownElsewhere,
}: {
  args: Record<string, unknown>;
  isShownElsewhere: boolean;
}) {
  const entries = Object.entries(args);
  if (entries.length === 0) return <p className="text-xs text-slate-500">no arguments</p>;
  return (
    <dl
      aria-label="Tool arguments"
      className="min-w-0 space-y-2 rounded-md bg-slate-900 p-3 text-xs text-slate-100"
    >
      {entries.map(([key, value]) => (
        <div key={key} className="min-w-0">
          <dt className="font-mono text-slate-400">
            <VisibleText text={key} variant="code" />
          </dt>
          <dd className="mt-0.5">
            <VisibleText
              text={typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? "")}
              variant="code"
              {...(!isShownElsewhere && UNSHOWN_VALUE)}
            />
          </dd>
        </div>
      ))}
    </dl>
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The body of a tool_approval card, from the payload as the server stored it. */
export function ToolCallView({ payload }: { payload: Record<string, unknown> }) {
  const card = buildToolCallCard(payload);
  const args = isRecord(payload.args) ? payload.args : {};
  const reason = typeof payload.reason === "string" ? payload.reason : "";
  // Only the gate's own cards carry `reasonBy`; an agent cannot send it (the payload is strict).
  const isGateReason = payload.reasonBy === "gate";
  // A parse with problems may have left part of the command on no line: its arguments stay whole.
  const isShownElsewhere =
    (card.shell !== null && !card.shell.isSourceMismatch && card.shell.problems.length === 0) ||
    isDiffShown(payload);
  return (
    <div className="min-w-0 space-y-3 text-sm">
      <TextWarnings flags={inspectValue({ tool: payload.tool, args, reason })} />
      <p className="flex flex-wrap items-center gap-2">
        <span>
          Tool{" "}
          <code className="rounded bg-slate-100 px-1 font-mono">
            <VisibleText text={String(payload.tool)} variant="code" />
          </code>
        </span>
        {card.riskClass && <RiskBadge riskClass={card.riskClass} />}
      </p>
      {card.riskClass === null && (
        <p role="note" className="text-xs font-medium text-rose-700">
          This request carries no readable classification from the server: read the arguments with
          care.
        </p>
      )}
      {reason && (
        <p className="text-slate-700">
          <span className="font-medium">
            {isGateReason ? "Asked because: " : "Reason given by the agent: "}
          </span>
          <VisibleText text={reason} />
        </p>
      )}
      {card.shell && <ShellCommandView shell={card.shell} />}
      <ReasonList reasons={card.reasons} label="Why it is risky" />
      <section aria-label="Exact arguments" className="min-w-0 space-y-1">
        <h3 className="text-xs font-semibold tracking-wide text-slate-500 uppercase">
          Exact arguments
        </h3>
        <ToolArgs args={args} isShownElsewhere={isShownElsewhere} />
      </section>
    </div>
  );
}
