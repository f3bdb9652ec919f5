import {
  FILE_ABSENT,
  isFileChangeTool,
  proposeContent,
  targetPathOf,
  type FileChange,
} from "../shared/protocol/file-change";
import { hashFileBytes } from "../shared/protocol/file-snapshot";
import type { ToolVerdict } from "./schema";

/**
 * The TOCTOU guard of file-writing calls (decision 025). The card shows a diff of the file as it
 * was when the call was asked; the approval binds that file's hash, so a retry that finds another
 * file (or says nothing about it) is refused and asks again, with a new card and a new diff.
 */

/**
 * Why a call's `file` cannot be shown as its diff, or null. The sides must be the file the hash
 * names and what the arguments make of it: whoever sends the call, the card shows what would run.
 */
export function findFileChangeProblem(input: {
  tool: string;
  args: Record<string, unknown>;
  file?: FileChange | undefined;
}): string | null {
  const { tool, args, file } = input;
  if (!file) return null;
  if (!isFileChangeTool(tool)) return `${tool} changes no file; send no file with it`;
  if (targetPathOf(tool, args) !== file.path) {
    return "file.path must be the path the arguments name";
  }
  if (file.before !== undefined) {
    const isBase =
      file.baseHash === FILE_ABSENT
        ? file.before === ""
        : hashFileBytes(Buffer.from(file.before, "utf8")) === file.baseHash;
    if (!isBase) return "file.before is not the file file.baseHash names";
    const proposed = proposeContent(tool, args, file.before);
    if (file.after !== undefined && (!proposed.ok || proposed.after !== file.after)) {
      return "file.after is not what the arguments make of file.before";
    }
    if (file.unshown?.reason === "does_not_apply" && proposed.ok) {
      return "the change applies to file.before: send both sides";
    }
  }
  return null;
}

/** The base hash an approval was given for, or null when its call carried no file. */
function boundBaseHash(payload: unknown): string | null {
  if (typeof payload !== "object" || payload === null) return null;
  const file = (payload as { file?: unknown }).file;
  if (typeof file !== "object" || file === null) return null;
  const baseHash = (file as { baseHash?: unknown }).baseHash;
  return typeof baseHash === "string" ? baseHash : null;
}

/** Whether a call finds the file its approval (or its pending card) was given for. */
export function isSameBase(payload: unknown, file: FileChange | undefined): boolean {
  return boundBaseHash(payload) === (file?.baseHash ?? null);
}

/** The refusal of a retry whose file is not the one the Lead approved a change to. */
export function refuseChangedFile(
  payload: unknown,
  file: FileChange | undefined,
  requestId: string,
): ToolVerdict | null {
  if (isSameBase(payload, file)) return null;
  const bound = boundBaseHash(payload);
  const reason =
    file === undefined
      ? `the Lead approved a change to the file as it was (${bound}), and this call does not say what the file is now`
      : bound === null
        ? "the Lead approved this call without a file to check it against; ask again to show the diff"
        : `the file changed since the Lead approved (${bound} then, ${file.baseHash} now); ask again with the new diff`;
  return { allowed: false, code: "FILE_CHANGED", reason, requestId };
}
