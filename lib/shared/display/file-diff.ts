import { structuredPatch } from "diff";

/**
 * The unified diff a file-writing call's card shows, from the two sides its `file` carries. Pure
 * (the `diff` package, no DOM), so the inbox and history render the same lines; never run on the
 * server's hot path.
 */

export type DiffLine =
  | {
      kind: "added" | "removed" | "context";
      text: string;
      oldLine: number | null;
      newLine: number | null;
    }
  /** "\ No newline at end of file", about the line before it. */
  | { kind: "no_newline"; text: string; oldLine: null; newLine: null };

export type DiffHunk = { header: string; lines: DiffLine[] };

export type FileDiff = { hunks: DiffHunk[]; added: number; removed: number };

/** Lines of context around each change, as `diff -u` shows them. */
const CONTEXT_LINES = 3;

export function buildFileDiff(before: string, after: string): FileDiff {
  const patch = structuredPatch("a", "b", before, after, "", "", { context: CONTEXT_LINES });
  let added = 0;
  let removed = 0;
  const hunks = patch.hunks.map((hunk): DiffHunk => {
    let oldLine = hunk.oldStart;
    let newLine = hunk.newStart;
    const lines = hunk.lines.map((raw): DiffLine => {
      const text = raw.slice(1);
      switch (raw[0]) {
        case "+":
          added++;
          return { kind: "added", text, oldLine: null, newLine: newLine++ };
        case "-":
          removed++;
          return { kind: "removed", text, oldLine: oldLine++, newLine: null };
        case "\\":
          return { kind: "no_newline", text: raw.slice(2), oldLine: null, newLine: null };
        default:
          return { kind: "context", text, oldLine: oldLine++, newLine: newLine++ };
      }
    });
    return {
      header: `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`,
      lines,
    };
  });
  return { hunks, added, removed };
}

/** highlight.js language names by file extension; anything else is shown as plain text. */
const LANGUAGES_BY_EXTENSION: Readonly<Record<string, string>> = {
  ts: "typescript",
  tsx: "typescript",
  mts: "typescript",
  cts: "typescript",
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  json: "json",
  py: "python",
  sh: "bash",
  bash: "bash",
  css: "css",
  html: "xml",
  htm: "xml",
  xml: "xml",
  svg: "xml",
  md: "markdown",
  yml: "yaml",
  yaml: "yaml",
  go: "go",
  rs: "rust",
  java: "java",
  sql: "sql",
};

export function languageOfPath(filePath: string): string | null {
  const name = filePath.split(/[\\/]/).pop() ?? "";
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return null;
  const extension = name.slice(dot + 1).toLowerCase();
  return Object.hasOwn(LANGUAGES_BY_EXTENSION, extension)
    ? (LANGUAGES_BY_EXTENSION[extension] ?? null)
    : null;
}
