"use client";

import { useState } from "react";
import {
  renderVisibleText,
  type VisibleSegment,
  type VisibleTextFlags,
} from "@/lib/shared/display/visible-text";

/** Escapes look like nothing an agent can type: a tinted chip in the text's own line. */
const SEGMENT_STYLES = {
  escape:
    "rounded-sm bg-amber-100 px-0.5 font-mono text-[0.85em] text-amber-900 ring-1 ring-amber-300",
  whitespace: "rounded-sm bg-slate-200/70 px-0.5 font-mono text-[0.85em] text-slate-600",
  marks:
    "rounded-sm bg-amber-100 px-0.5 font-mono text-[0.85em] text-amber-900 ring-1 ring-amber-300",
  lookalike: "bg-rose-100 text-rose-900 underline decoration-rose-500 decoration-wavy",
} as const;

const COLLAPSED_STYLE =
  "mx-0.5 rounded-sm bg-indigo-50 px-1 font-sans text-[0.85em] font-medium text-indigo-700 ring-1 ring-indigo-200";

export function describeSegment(segment: VisibleSegment): string | undefined {
  switch (segment.kind) {
    case "escape":
      return "A hidden or control character, shown by its code";
    case "whitespace":
      return segment.text === "⟨tab⟩" ? "A tab character" : `${segment.count} spaces in a row`;
    case "marks":
      return `${segment.count} combining marks stacked on one letter`;
    case "lookalike":
      return `${segment.script} letters that look Latin`;
    default:
      return undefined;
  }
}

export function segmentClassName(kind: keyof typeof SEGMENT_STYLES): string {
  return SEGMENT_STYLES[kind];
}

/** One segment as React nodes. Shared with the markdown renderer, which escapes its text nodes. */
export function VisibleSegmentView({ segment }: { segment: VisibleSegment }) {
  if (segment.kind === "text") return segment.text;
  if (segment.kind === "collapsed") return null;
  return (
    <span
      data-segment={segment.kind}
      className={SEGMENT_STYLES[segment.kind]}
      title={describeSegment(segment)}
    >
      {segment.text}
    </span>
  );
}

/**
 * Agent-controlled text as it must be shown: wrapped (never scrolled sideways), hidden characters
 * escaped, long runs counted, a very long value collapsed with both ends visible. `code` keeps the
 * characters in the order they run: right-to-left letters cannot reorder the text around them.
 */
export function VisibleText({
  text,
  variant = "prose",
  maxCharacters,
  maxLines,
  canExpand = true,
  className = "",
}: {
  text: string;
  variant?: "prose" | "code";
  maxCharacters?: number;
  maxLines?: number;
  /** False inside another control (a list item that is a button): the marker is plain text. */
  canExpand?: boolean;
  className?: string;
}) {
  const [isExpanded, setIsExpanded] = useState(false);
  const visible = renderVisibleText(
    text,
    isExpanded ? { maxCharacters: Infinity, maxLines: Infinity } : { maxCharacters, maxLines },
  );
  const layout =
    variant === "code"
      ? "font-mono [unicode-bidi:bidi-override] [direction:ltr]"
      : "[unicode-bidi:isolate]";
  return (
    <span
      data-visible-text
      dir={variant === "code" ? "ltr" : undefined}
      className={`min-w-0 wrap-anywhere whitespace-pre-wrap ${layout} ${className}`}
    >
      {visible.segments.map((segment, index) =>
        segment.kind === "collapsed" && !canExpand ? (
          <span key={index} data-segment="collapsed" className={COLLAPSED_STYLE}>
            {`… ${segment.omitted.toLocaleString("en-US")} more characters …`}
          </span>
        ) : segment.kind === "collapsed" ? (
          <button
            key={index}
            type="button"
            onClick={() => setIsExpanded(true)}
            title={`${segment.omitted.toLocaleString("en-US")} characters are not shown`}
            className={`${COLLAPSED_STYLE} hover:bg-indigo-100 focus-visible:outline-2 focus-visible:outline-indigo-600`}
          >
            {segment.text}
          </button>
        ) : (
          <VisibleSegmentView key={index} segment={segment} />
        ),
      )}
    </span>
  );
}

/** [flag, the card's warning, the short badge a list shows]. */
const WARNINGS: [keyof VisibleTextFlags, string, string][] = [
  ["hasHiddenCharacters", "contains hidden characters (shown as ⟨U+…⟩)", "hidden characters"],
  [
    "hasLookalikes",
    "look-alike letters: not the Latin letters they look like (underlined)",
    "look-alike letters",
  ],
  ["hasStackedMarks", "stacked combining marks (shown as a count)", "stacked marks"],
  [
    "hasRightToLeftText",
    "right-to-left text (commands are shown in the order they run)",
    "right-to-left text",
  ],
];

/**
 * What a card warns about, for all its texts together; nothing when there is nothing to say.
 * `isCompact` gives inline badges, for a list item that is itself a button.
 */
export function TextWarnings({
  flags,
  isCompact = false,
  className = "",
}: {
  flags: VisibleTextFlags;
  isCompact?: boolean;
  className?: string;
}) {
  const active = WARNINGS.filter(([flag]) => flags[flag]);
  if (active.length === 0) return null;
  if (isCompact) {
    return (
      <span aria-label="Display warnings" className={`flex flex-wrap gap-1 ${className}`}>
        {active.map(([flag, , badge]) => (
          <span
            key={flag}
            className="rounded bg-amber-100 px-1.5 py-0.5 text-xs font-semibold text-amber-900"
          >
            ⚠ {badge}
          </span>
        ))}
      </span>
    );
  }
  return (
    <ul
      role="note"
      aria-label="Display warnings"
      className={`space-y-0.5 rounded-md bg-amber-50 px-3 py-2 text-xs font-medium text-amber-900 ring-1 ring-amber-300 ring-inset ${className}`}
    >
      {active.map(([flag, warning]) => (
        <li key={flag}>⚠ {warning}</li>
      ))}
    </ul>
  );
}
