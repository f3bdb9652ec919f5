"use client";

import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { useMemo } from "react";
import { TextWarnings, VisibleText } from "@/components/ui/visible-text";
import {
  buildFileDiff,
  languageOfPath,
  type DiffLine,
  type FileDiff as FileDiffLines,
} from "@/lib/shared/display/file-diff";
import { combineFlags, inspectText, toVisibleString } from "@/lib/shared/display/visible-text";
import {
  describeUnshown,
  FILE_ABSENT,
  FILE_UNREADABLE,
  fileChangeSchema,
  isFileChangeTool,
  type FileChange,
} from "@/lib/shared/protocol/file-change";

const LANGUAGES = {
  bash,
  css,
  go,
  java,
  javascript,
  json,
  markdown,
  python,
  rust,
  sql,
  typescript,
  xml,
  yaml,
};
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

const ROW_STYLES: Record<DiffLine["kind"], string> = {
  added: "bg-emerald-50",
  removed: "bg-rose-50",
  context: "",
  no_newline: "",
};

const SIGNS: Record<DiffLine["kind"], [sign: string, spoken: string]> = {
  added: ["+", "added"],
  removed: ["−", "removed"],
  context: [" ", "unchanged"],
  no_newline: ["\\", "note"],
};

/**
 * One line of code. highlight.js escapes the text it is given and returns only its own spans, so
 * its HTML is the one thing set as HTML; a line with hidden, look-alike or right-to-left
 * characters is shown by the one renderer of untrusted text instead, unhighlighted.
 */
function CodeLine({ text, language }: { text: string; language: string | null }) {
  const flags = inspectText(text);
  const isPlain =
    !flags.hasHiddenCharacters &&
    !flags.hasLookalikes &&
    !flags.hasStackedMarks &&
    !flags.hasRightToLeftText;
  if (!isPlain) {
    return <VisibleText text={text} variant="code" maxCharacters={Infinity} canExpand={false} />;
  }
  if (language === null) return <span>{text}</span>;
  const html = hljs.highlight(text, { language, ignoreIllegals: true }).value;
  return <span dangerouslySetInnerHTML={{ __html: html }} />;
}

function DiffRows({ diff, language }: { diff: FileDiffLines; language: string | null }) {
  return diff.hunks.map((hunk, hunkIndex) => (
    <tbody key={hunkIndex}>
      <tr className="bg-slate-100 text-slate-700">
        <td colSpan={4} className="px-2 py-0.5">
          {hunk.header}
        </td>
      </tr>
      {hunk.lines.map((line, index) => {
        const [sign, spoken] = SIGNS[line.kind];
        return (
          <tr key={index} data-diff-line={line.kind} className={ROW_STYLES[line.kind]}>
            <td className="w-px px-2 text-right text-slate-600 select-none">
              {line.oldLine ?? ""}
            </td>
            <td className="w-px px-2 text-right text-slate-600 select-none">
              {line.newLine ?? ""}
            </td>
            <td className="w-px px-1 font-semibold text-slate-900 select-none">
              <span aria-hidden="true">{sign}</span>
              <span className="sr-only">{spoken}</span>
            </td>
            <td className="diff-code px-2 [overflow-wrap:anywhere] whitespace-pre-wrap text-slate-900">
              {line.kind === "no_newline" ? (
                <span className="text-slate-600 italic">{line.text}</span>
              ) : (
                <CodeLine text={line.text} language={language} />
              )}
            </td>
          </tr>
        );
      })}
    </tbody>
  ));
}

function describeBase(file: FileChange): string {
  if (file.baseHash === FILE_ABSENT) return "new file";
  if (file.baseHash === FILE_UNREADABLE) return "a file the agent could not read";
  return `base ${file.baseHash.slice(0, "sha256:".length + 12)}…`;
}

function ShownDiff({ file, before, after }: { file: FileChange; before: string; after: string }) {
  const diff = useMemo(() => buildFileDiff(before, after), [before, after]);
  const flags = useMemo(
    () => combineFlags([inspectText(before), inspectText(after)]),
    [before, after],
  );
  if (diff.hunks.length === 0) {
    return (
      <p className="text-sm text-slate-700">No change: the file already holds this content.</p>
    );
  }
  return (
    <div className="space-y-2">
      <TextWarnings flags={flags} />
      <p className="text-xs text-slate-700">
        {diff.added} {diff.added === 1 ? "line" : "lines"} added, {diff.removed}{" "}
        {diff.removed === 1 ? "line" : "lines"} removed
      </p>
      <div className="max-h-[32rem] overflow-auto rounded-md ring-1 ring-slate-200">
        <table className="w-full border-collapse font-mono text-xs leading-5">
          <caption className="sr-only">Unified diff of {toVisibleString(file.path)}</caption>
          <thead className="sr-only">
            <tr>
              <th scope="col">Old line</th>
              <th scope="col">New line</th>
              <th scope="col">Change</th>
              <th scope="col">Text</th>
            </tr>
          </thead>
          <DiffRows diff={diff} language={languageOfPath(file.path)} />
        </table>
      </div>
    </div>
  );
}

/** The diff of a file-writing tool call, from the `file` the gate stored with its card. */
export function FileDiff({ payload }: { payload: Record<string, unknown> }) {
  const parsed = fileChangeSchema.safeParse(payload.file);
  if (!parsed.success) {
    if (!isFileChangeTool(String(payload.tool))) return null;
    return (
      <p className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
        No diff: the agent did not send the file&apos;s content, so this approval is not bound to
        the file as it is now.
      </p>
    );
  }
  const file = parsed.data;
  return (
    <section aria-label={`Changes to ${toVisibleString(file.path)}`} className="min-w-0 space-y-2">
      <h3 className="flex min-w-0 flex-wrap items-baseline gap-x-2 text-sm font-semibold text-slate-900">
        <span>Changes to</span>
        <VisibleText text={file.path} variant="code" />
        <span className="text-xs font-normal text-slate-600">({describeBase(file)})</span>
      </h3>
      {file.before !== undefined && file.after !== undefined ? (
        <ShownDiff file={file} before={file.before} after={file.after} />
      ) : (
        <p className="rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-800">
          {/* The detail is the agent's words: shown like any text it wrote. */}
          <VisibleText
            text={file.unshown ? describeUnshown(file.unshown) : "The change is not shown."}
          />
        </p>
      )}
    </section>
  );
}

/** The same diff behind a disclosure, for a list of decided requests (history). */
export function FileDiffDisclosure({ payload }: { payload: Record<string, unknown> }) {
  const parsed = fileChangeSchema.safeParse(payload.file);
  if (!parsed.success) return null;
  return (
    <details className="mt-1 text-xs">
      <summary className="cursor-pointer text-indigo-700 hover:underline">
        Show the diff of <VisibleText text={parsed.data.path} variant="code" />
      </summary>
      <div className="mt-2 w-[36rem] max-w-[80vw]">
        <FileDiff payload={payload} />
      </div>
    </details>
  );
}
