import { constants } from "node:fs";
import { lchown, mkdir, readdir, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { defineTool, type ToolContext } from "./tool-definition";
import {
  editFileArgsSchema,
  MAX_WRITE_BYTES,
  toolPathSchema,
  writeFileArgsSchema,
} from "../../lib/shared/protocol/tool-args";
import { openInWorkspace, resolveWorkspacePath } from "./workspace-path";

export { MAX_WRITE_BYTES };
// A read lands in the model's context; past this it costs more than it can help.
export const MAX_READ_BYTES = 256 * 1024;
export const MAX_LIST_ENTRIES = 500;

/** Node's fs messages name absolute host paths; the model only knows its workspace-relative one. */
function explainFsError(error: unknown, requested: string): Error {
  const messages: Record<string, string> = {
    ENOENT: `${requested} does not exist`,
    EISDIR: `${requested} is a directory`,
    ENOTDIR: `${requested}: a component of the path is not a directory`,
    EACCES: `${requested}: permission denied`,
    ENAMETOOLONG: `${requested}: the path is too long`,
  };
  const code = (error as NodeJS.ErrnoException).code;
  if (code === undefined) return error as Error;
  // Any other system error is reported by its code alone: its message names host paths.
  return new Error(messages[code] ?? `${requested}: ${code}`);
}

async function withFsErrors<T>(requested: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw explainFsError(error, requested);
  }
}

/** Reads at most `limit` bytes, so a huge file costs no more memory than a big one. */
async function readHead(
  handle: FileHandle,
  requested: string,
  limit: number,
): Promise<{ head: Buffer; size: number }> {
  const info = await handle.stat();
  if (info.isDirectory()) throw new Error(`${requested} is a directory`);
  if (!info.isFile()) throw new Error(`${requested} is not a regular file`);
  const size = info.size;
  const buffer = Buffer.alloc(Math.min(size, limit));
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  return { head: buffer.subarray(0, bytesRead), size };
}

/** Runs `action` on the opened file and always closes it. */
async function withOpened<T>(
  context: ToolContext,
  requested: string,
  flags: number,
  action: (handle: FileHandle) => Promise<T>,
): Promise<T> {
  return withFsErrors(requested, async () => {
    const handle = await openInWorkspace(context.workspace, requested, flags);
    try {
      return await action(handle);
    } finally {
      await handle.close();
    }
  });
}

/**
 * When bash runs as another host uid (the worker is root), what the file tools create is handed
 * to that uid, so the sandbox can go on editing it.
 */
function sandboxOwner(context: ToolContext): { uid: number; gid: number } | null {
  return context.sandbox.status === "sandboxed" ? context.sandbox.settings.identity : null;
}

async function replaceContent(handle: FileHandle, requested: string, content: string) {
  if (!(await handle.stat()).isFile()) throw new Error(`${requested} is not a regular file`);
  await handle.truncate(0);
  await handle.write(content, 0, "utf8");
}

export const readFileTool = defineTool({
  name: "read_file",
  description: `Read a UTF-8 text file in your workspace (first ${MAX_READ_BYTES / 1024} KiB).`,
  argsSchema: z.strictObject({ path: toolPathSchema.describe("path relative to the workspace") }),
  run: async (args, context) => {
    const { head, size } = await withOpened(context, args.path, constants.O_RDONLY, (handle) =>
      readHead(handle, args.path, MAX_READ_BYTES),
    );
    const text = head.toString("utf8");
    return size > head.length ? `${text}\n[truncated: the file is ${size} bytes]` : text;
  },
});

export const listFilesTool = defineTool({
  name: "list_files",
  description: `List one directory of your workspace (not recursive); directories end in "/".`,
  argsSchema: z.strictObject({
    path: toolPathSchema
      .optional()
      .describe("directory relative to the workspace; default: the root"),
  }),
  run: async (args, context) => {
    const requested = args.path ?? ".";
    // Listed through the opened descriptor, so the folder read is the one that was checked.
    const entries = await withOpened(
      context,
      requested,
      constants.O_RDONLY | constants.O_DIRECTORY,
      (handle) => readdir(`/proc/self/fd/${handle.fd}`, { withFileTypes: true }),
    );
    if (entries.length === 0) return "(empty directory)";
    const names = entries
      .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
      .sort();
    const shown = names.slice(0, MAX_LIST_ENTRIES);
    const hidden = names.length - shown.length;
    return hidden > 0
      ? `${shown.join("\n")}\n[truncated: ${hidden} more entries]`
      : shown.join("\n");
  },
});

export const writeFileTool = defineTool({
  name: "write_file",
  description:
    "Create or overwrite a file in your workspace, creating parent directories. When several " +
    "files must change together, give each the same batch id with its index and the total.",
  argsSchema: writeFileArgsSchema,
  run: async (args, context) => {
    // Before touching the disk, so a contradictory batch leaves neither file nor record behind.
    if (args.batch) context.state.assertBatchFits(args.batch);
    const file = await withFsErrors(args.path, () =>
      resolveWorkspacePath(context.workspace, args.path),
    );
    const owner = sandboxOwner(context);
    await withFsErrors(args.path, async () => {
      const firstCreated = await mkdir(path.dirname(file), { recursive: true });
      if (owner && firstCreated) {
        for (let folder = path.dirname(file); ; folder = path.dirname(folder)) {
          await lchown(folder, owner.uid, owner.gid);
          if (folder === firstCreated || folder === path.dirname(folder)) break;
        }
      }
    });
    // No O_TRUNC: nothing is cut before the opened file has passed its checks.
    await withOpened(context, args.path, constants.O_WRONLY | constants.O_CREAT, async (handle) => {
      await replaceContent(handle, args.path, args.content);
      if (owner) await handle.chown(owner.uid, owner.gid);
    });
    const bytes = Buffer.byteLength(args.content, "utf8");
    if (!args.batch) return `wrote ${bytes} bytes to ${args.path}`;
    context.state.recordBatchWrite(args.batch);
    const { id, index, total } = args.batch;
    return `wrote ${bytes} bytes to ${args.path} (batch '${id}': file ${index} of ${total})`;
  },
});

/** Every start offset of `needle`, overlapping ones included: "aa" occurs twice in "aaa". */
function findOccurrences(haystack: string, needle: string): number[] {
  const offsets: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1))
    offsets.push(at);
  return offsets;
}

export const editFileTool = defineTool({
  name: "edit_file",
  description:
    "Replace one exact piece of text in a file of your workspace. oldText must occur exactly " +
    "once; include surrounding lines to make it unique.",
  argsSchema: editFileArgsSchema,
  run: async (args, context) => {
    await withOpened(context, args.path, constants.O_RDWR, async (handle) => {
      if (!(await handle.stat()).isFile()) throw new Error(`${args.path} is not a regular file`);
      await replaceContent(handle, args.path, editContent(await handle.readFile("utf8"), args));
    });
    return `edited ${args.path}`;
  },
});

/** The file's content with oldText replaced, or why that cannot be done. */
function editContent(
  content: string,
  args: { path: string; oldText: string; newText: string },
): string {
  const occurrences = findOccurrences(content, args.oldText);
  const [offset, ...others] = occurrences;
  if (offset === undefined || others.length > 0)
    throw new Error(
      `oldText occurs ${occurrences.length} times in ${args.path}; it must occur exactly once`,
    );
  // Slicing, not String.replace: newText is literal, "$&" and friends must not expand.
  const edited =
    content.slice(0, offset) + args.newText + content.slice(offset + args.oldText.length);
  if (Buffer.byteLength(edited, "utf8") > MAX_WRITE_BYTES)
    throw new Error(`the edited ${args.path} would be larger than 1 MB`);
  return edited;
}

export const FILE_TOOLS = [readFileTool, listFilesTool, writeFileTool, editFileTool];
