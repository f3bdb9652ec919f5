import { z } from "zod";

/**
 * What a file-writing tool call would change, sent beside its arguments (never inside them, so the
 * call hash and the Lead's edits stay about the call): the file's content hash when the call was
 * asked (`baseHash`, which the approval binds) and both sides of the change for the card's diff.
 * The worker and the connector's hook build it from the file on disk; the server checks that the
 * two sides agree with the hash and the arguments. Pure and browser-safe: hashing lives in
 * file-snapshot.ts.
 */

/** The base of a file that does not exist yet: the call creates it. */
export const FILE_ABSENT = "absent";
/** The base of a file the caller could not read (the card says why); binds only that it was so. */
export const FILE_UNREADABLE = "unreadable";

/** Both sides of a diff together, as sent (JSON, UTF-8); past this the card says "too large to show". */
export const MAX_DIFF_BYTES = 256 * 1024;

/** The tools that change one file, and the argument naming it. */
export const FILE_CHANGE_TOOLS: Readonly<Record<string, string>> = {
  write_file: "path",
  edit_file: "path",
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
};

export function isFileChangeTool(tool: string): boolean {
  return Object.hasOwn(FILE_CHANGE_TOOLS, tool);
}

/** The path a file tool's arguments name, or null when they name none. */
export function targetPathOf(tool: string, args: Record<string, unknown>): string | null {
  const field = isFileChangeTool(tool) ? FILE_CHANGE_TOOLS[tool] : undefined;
  const value = field === undefined ? undefined : args[field];
  return typeof value === "string" ? value : null;
}

export const baseHashSchema = z.union([
  z.literal(FILE_ABSENT),
  z.literal(FILE_UNREADABLE),
  z.string().regex(/^sha256:[0-9a-f]{64}$/, "sha256:<64 lower-case hex digits>"),
]);

export const UNSHOWN_REASONS = [
  "too_large",
  "unreadable",
  "not_text",
  "does_not_apply",
  "outside_session",
] as const;

export const fileChangeSchema = z
  .strictObject({
    path: z.string().min(1).max(4_096),
    baseHash: baseHashSchema,
    /** The file as it is (empty for a file that does not exist). */
    before: z.string().max(MAX_DIFF_BYTES).optional(),
    /** The file as the call would leave it. */
    after: z.string().max(MAX_DIFF_BYTES).optional(),
    /** Why there is no diff to show; present exactly when `after` is absent. */
    unshown: z
      .strictObject({ reason: z.enum(UNSHOWN_REASONS), detail: z.string().max(500).optional() })
      .optional(),
  })
  .refine((file) => file.after === undefined || file.before !== undefined, {
    message: "after needs before",
    path: ["before"],
  })
  .refine((file) => (file.after === undefined) === (file.unshown !== undefined), {
    message: "either both sides of the change, or unshown saying why not",
    path: ["unshown"],
  })
  .refine((file) => file.baseHash !== FILE_UNREADABLE || file.before === undefined, {
    message: "an unreadable file has no before",
    path: ["before"],
  });
export type FileChange = z.infer<typeof fileChangeSchema>;

/**
 * Why a call's content is not proposed: the change does not apply, or its result would be too
 * large to show, which is known before it is built.
 */
export type ProposedContent =
  | { ok: true; after: string }
  | { ok: false; reason: "does_not_apply" | "too_large"; problem: string };

/**
 * The longest content a change is worked out to, in UTF-16 units: no side longer than the diff's
 * cap is shown, so nothing reads past it. Without it, `replace_all` edits each multiplied the
 * content, and a few kilobytes of arguments asked for more memory than a string may hold.
 */
const MAX_PROPOSED_UNITS = MAX_DIFF_BYTES;

/** The most a MultiEdit's edits search together, in UTF-16 units: four times a diff's largest side. */
const MAX_SEARCHED_UNITS = 4 * MAX_PROPOSED_UNITS;

const doesNotApply = (problem: string): ProposedContent => ({
  ok: false,
  reason: "does_not_apply",
  problem,
});

/**
 * Past this many occurrences they are no longer counted: each overlapping one costs a search, so
 * a needle of half a file of `a`s in that file cost the square of the file (3.7 s at 220 KB).
 */
const MAX_COUNTED_OCCURRENCES = 10;

/**
 * The first start offsets of `needle`, overlapping ones included ("aa" occurs twice in "aaa"), up
 * to one past the count that is told.
 */
function findOccurrences(haystack: string, needle: string): number[] {
  const offsets: number[] = [];
  for (
    let at = haystack.indexOf(needle);
    at !== -1 && offsets.length <= MAX_COUNTED_OCCURRENCES;
    at = haystack.indexOf(needle, at + 1)
  )
    offsets.push(at);
  return offsets;
}

/** Our `edit_file`: oldText must occur exactly once (counting overlaps); newText is literal. */
export function applyEditFile(
  content: string,
  oldText: string,
  newText: string,
  fileName?: string,
): ProposedContent {
  const occurrences = findOccurrences(content, oldText);
  const [offset, ...others] = occurrences;
  if (oldText === "" || offset === undefined || others.length > 0) {
    const count =
      oldText === ""
        ? "everywhere"
        : occurrences.length > MAX_COUNTED_OCCURRENCES
          ? `more than ${MAX_COUNTED_OCCURRENCES} times`
          : `${occurrences.length} times`;
    const where = fileName === undefined ? "" : ` in ${fileName}`;
    return doesNotApply(`oldText occurs ${count}${where}; it must occur exactly once`);
  }
  // Slicing, not String.replace: newText is literal, "$&" and friends must not expand.
  return {
    ok: true,
    after: content.slice(0, offset) + newText + content.slice(offset + oldText.length),
  };
}

const claudeEditSchema = z.object({
  old_string: z.string(),
  new_string: z.string(),
  replace_all: z.boolean().optional(),
});

/** Claude Code's Edit: old_string once (or every time with replace_all); empty only to create. */
function applyClaudeEdit(content: string, edit: z.infer<typeof claudeEditSchema>): ProposedContent {
  if (edit.old_string === "") {
    return content === ""
      ? { ok: true, after: edit.new_string }
      : doesNotApply("an empty old_string only creates a new file");
  }
  const parts = content.split(edit.old_string);
  const count = parts.length - 1;
  if (count === 0) return doesNotApply("old_string is not in the file");
  if (count > 1 && edit.replace_all !== true) {
    return doesNotApply(`old_string occurs ${count} times and replace_all is not set`);
  }
  // Known before the content is built, which is what the cap is for.
  const length = content.length + count * (edit.new_string.length - edit.old_string.length);
  if (length > MAX_PROPOSED_UNITS) {
    return {
      ok: false,
      reason: "too_large",
      problem: `the change would leave ${length} characters, more than a diff shows`,
    };
  }
  return { ok: true, after: parts.join(edit.new_string) };
}

/**
 * The content a file tool would leave, given the content it finds (empty for a new file), or why
 * it would fail. One implementation for the worker, the hook and the server's check of both.
 */
export function proposeContent(
  tool: string,
  args: Record<string, unknown>,
  before: string,
): ProposedContent {
  switch (tool) {
    case "write_file":
    case "Write":
      return typeof args.content === "string"
        ? { ok: true, after: args.content }
        : doesNotApply("no content string");
    case "edit_file":
      return typeof args.oldText === "string" && typeof args.newText === "string"
        ? applyEditFile(before, args.oldText, args.newText)
        : doesNotApply("no oldText and newText strings");
    case "Edit": {
      const edit = claudeEditSchema.safeParse(args);
      return edit.success
        ? applyClaudeEdit(before, edit.data)
        : doesNotApply("no old_string and new_string");
    }
    case "MultiEdit": {
      const edits = z.array(claudeEditSchema).min(1).safeParse(args.edits);
      if (!edits.success) return doesNotApply("no list of edits");
      let content = before;
      let searched = 0;
      for (const [index, edit] of edits.data.entries()) {
        // Each edit searches the whole content: thousands of small edits of a large file would
        // cost edits × content, 18 s for what one request body holds.
        searched += content.length;
        if (searched > MAX_SEARCHED_UNITS) {
          return {
            ok: false,
            reason: "too_large",
            problem: `the ${edits.data.length} edits would search more than ${MAX_SEARCHED_UNITS} characters`,
          };
        }
        const next = applyClaudeEdit(content, edit);
        if (!next.ok) return { ...next, problem: `edit ${index + 1}: ${next.problem}` };
        content = next.after;
      }
      return { ok: true, after: content };
    }
    default:
      return doesNotApply(`${tool} does not change a file`);
  }
}

/** Why a card shows no diff, in words. */
export function describeUnshown(unshown: NonNullable<FileChange["unshown"]>): string {
  const reasons: Record<(typeof UNSHOWN_REASONS)[number], string> = {
    too_large: "The change is too large to show",
    unreadable: "The file could not be read",
    not_text: "The file is not UTF-8 text",
    does_not_apply: "The change does not apply to the file as it is",
    outside_session:
      "The file is outside the session's directory: its content stays on its machine",
  };
  return unshown.detail
    ? `${reasons[unshown.reason]}: ${unshown.detail}`
    : `${reasons[unshown.reason]}.`;
}

/** Does the payload carry both sides of its change, which the card shows as a diff? */
export function isDiffShown(payload: Record<string, unknown>): boolean {
  const parsed = fileChangeSchema.safeParse(payload.file);
  return parsed.success && parsed.data.after !== undefined;
}
