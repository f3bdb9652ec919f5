import { constants } from "node:fs";
import { lchown, mkdir, opendir, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { applyEditFile, FILE_ABSENT, type FileChange } from "../../lib/shared/protocol/file-change";
import {
  baseHashOf,
  decodeText,
  readOpenedFile,
  snapshotFileChange,
  type FileOnDisk,
} from "../../lib/shared/protocol/file-snapshot";
import {
  editFileArgsSchema,
  MAX_WRITE_BYTES,
  toolPathSchema,
  writeFileArgsSchema,
} from "../../lib/shared/protocol/tool-args";
import { isWithinQuota, measureWorkspace, WORKSPACE_OVER_QUOTA, workspaceQuotaOf } from "./sandbox";
import { defineTool, ToolError, type FileGuard, type ToolContext } from "./tool-definition";
import { LinkedPathError, openInWorkspace, resolveUnlinkedPath } from "./workspace-path";

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
  options: { isWritten?: boolean } = {},
): Promise<T> {
  return withFsErrors(requested, async () => {
    const handle = await openInWorkspace(context.workspace, requested, flags, options);
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

/**
 * What is at `requested` now, for the gate's card. A path through a link is refused before the
 * gate is asked (resolveUnlinkedPath); what else cannot be read is sent as such, saying why, for
 * the gate to judge and record.
 */
async function findOnDisk(context: ToolContext, requested: string): Promise<FileOnDisk> {
  try {
    const handle = await openInWorkspace(context.workspace, requested, constants.O_RDONLY, {
      isWritten: true,
    });
    try {
      return await readOpenedFile(handle);
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof LinkedPathError) throw error;
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "absent" };
    return { kind: "unreadable", detail: explainFsError(error, requested).message };
  }
}

async function snapshotOf(
  tool: string,
  args: Record<string, unknown> & { path: string },
  context: ToolContext,
): Promise<FileChange> {
  return snapshotFileChange(tool, args, args.path, await findOnDisk(context, args.path));
}

function fileChanged(requested: string, detail: string): ToolError {
  return new ToolError(
    "FILE_CHANGED",
    `${requested} ${detail} since the gate was asked, so nothing was written; call again to see and send the new diff`,
  );
}

/**
 * Opens the file to change. With a guard, it must still be the file the gate was asked about,
 * checked through the opened handle right before the write: a file that appeared, vanished or
 * changed in between is refused here, whatever the server said.
 */
async function withGuardedFile<T>(
  context: ToolContext,
  requested: string,
  flags: number,
  guard: FileGuard | undefined,
  action: (handle: FileHandle) => Promise<T>,
): Promise<T> {
  if (!guard) return withOpened(context, requested, flags, action, { isWritten: true });
  const wasAbsent = guard.baseHash === FILE_ABSENT;
  const mayCreate = (flags & constants.O_CREAT) !== 0;
  // O_EXCL: a file that appeared since the check is not silently overwritten.
  const guardedFlags =
    wasAbsent && mayCreate
      ? constants.O_RDWR | constants.O_CREAT | constants.O_EXCL
      : constants.O_RDWR;
  let handle: FileHandle;
  try {
    handle = await openInWorkspace(context.workspace, requested, guardedFlags, {
      isWritten: true,
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw fileChanged(requested, "was created");
    if (code === "ENOENT" && !wasAbsent) throw fileChanged(requested, "was removed");
    throw explainFsError(error, requested);
  }
  try {
    if (wasAbsent && !mayCreate) throw fileChanged(requested, "was created");
    if (!wasAbsent && baseHashOf(await readOpenedFile(handle)) !== guard.baseHash) {
      throw fileChanged(requested, "changed");
    }
    return await withFsErrors(requested, () => action(handle));
  } finally {
    await handle.close();
  }
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

/**
 * The first MAX_LIST_ENTRIES names of a folder in sorted order, directories with a slash, and how
 * many it holds. Read as a stream, keeping only those names: a folder of ten million hard links
 * cost the worker 1.7 GB read whole.
 */
async function firstNamesOf(folder: string): Promise<{ shown: string[]; total: number }> {
  const shown: string[] = [];
  let total = 0;
  for await (const entry of await opendir(folder)) {
    total += 1;
    const name = entry.isDirectory() ? `${entry.name}/` : entry.name;
    if (shown.length === MAX_LIST_ENTRIES && !(name < (shown.at(-1) as string))) continue;
    let low = 0;
    let high = shown.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((shown[middle] as string) < name) low = middle + 1;
      else high = middle;
    }
    shown.splice(low, 0, name);
    if (shown.length > MAX_LIST_ENTRIES) shown.pop();
  }
  return { shown, total };
}

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
    const { shown, total } = await withOpened(
      context,
      requested,
      constants.O_RDONLY | constants.O_DIRECTORY,
      (handle) => firstNamesOf(`/proc/self/fd/${handle.fd}`),
    );
    if (total === 0) return "(empty directory)";
    const hidden = total - shown.length;
    return hidden > 0
      ? `${shown.join("\n")}\n[truncated: ${hidden} more entries]`
      : shown.join("\n");
  },
});

/**
 * Over its quota the workspace may not grow through the file tools either (bash runs with writes
 * disabled then): removing files with bash is the way back. Five 1 MB writes passed a full one.
 * Without a sandbox too: a workspace the model made unwritable for the sandbox's uid turned the
 * next probe into "no sandbox", and the quota with it.
 */
async function refuseOverQuota(context: ToolContext, requested: string): Promise<void> {
  const quota = workspaceQuotaOf(context.sandbox);
  if (quota === undefined) return;
  if (isWithinQuota(await measureWorkspace(context.workspace, quota), quota)) return;
  throw new ToolError(
    WORKSPACE_OVER_QUOTA,
    `the workspace is over its quota of ${Math.round(quota / (1024 * 1024))} MiB: remove files with bash before changing ${requested}`,
  );
}

export const writeFileTool = defineTool({
  name: "write_file",
  description:
    "Create or overwrite a file in your workspace, creating parent directories. When several " +
    "files must change together, give each the same batch id with its index and the total.",
  argsSchema: writeFileArgsSchema,
  snapshot: (args, context) => snapshotOf("write_file", args, context),
  run: async (args, context, guard) => {
    // Before touching the disk, so a contradictory batch leaves neither file nor record behind.
    if (args.batch) context.state.assertBatchFits(args.batch);
    await refuseOverQuota(context, args.path);
    const file = await withFsErrors(args.path, () =>
      resolveUnlinkedPath(context.workspace, args.path),
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
    await withGuardedFile(
      context,
      args.path,
      constants.O_WRONLY | constants.O_CREAT,
      guard,
      async (handle) => {
        await replaceContent(handle, args.path, args.content);
        if (owner) await handle.chown(owner.uid, owner.gid);
      },
    );
    const bytes = Buffer.byteLength(args.content, "utf8");
    if (!args.batch) return `wrote ${bytes} bytes to ${args.path}`;
    context.state.recordBatchWrite(args.batch);
    const { id, index, total } = args.batch;
    return `wrote ${bytes} bytes to ${args.path} (batch '${id}': file ${index} of ${total})`;
  },
});

export const editFileTool = defineTool({
  name: "edit_file",
  description:
    "Replace one exact piece of text in a file of your workspace. oldText must occur exactly " +
    "once; include surrounding lines to make it unique.",
  argsSchema: editFileArgsSchema,
  snapshot: (args, context) => snapshotOf("edit_file", args, context),
  run: async (args, context, guard) => {
    await refuseOverQuota(context, args.path);
    await withGuardedFile(context, args.path, constants.O_RDWR, guard, async (handle) => {
      const info = await handle.stat();
      if (!info.isFile()) throw new Error(`${args.path} is not a regular file`);
      // Read whole only if the edit can fit: a 500 MB file cost the worker a gigabyte to refuse.
      if (info.size - Buffer.byteLength(args.oldText, "utf8") > MAX_WRITE_BYTES) {
        throw new Error(tooLargeAfterEdit(args.path));
      }
      // Decoded loosely, a byte that is not UTF-8 would be written back as U+FFFD: a change
      // outside the edit, which no card showed (the card said "not UTF-8 text").
      const text = decodeText(await handle.readFile());
      if (text === null) {
        throw new Error(
          `${args.path} is not UTF-8 text: edit_file would change bytes outside the edit; rewrite it with write_file or bash`,
        );
      }
      await replaceContent(handle, args.path, editContent(text, args));
    });
    return `edited ${args.path}`;
  },
});

/** The file's content with oldText replaced, or why that cannot be done. */
function editContent(
  content: string,
  args: { path: string; oldText: string; newText: string },
): string {
  const proposed = applyEditFile(content, args.oldText, args.newText, args.path);
  if (!proposed.ok) throw new Error(proposed.problem);
  const edited = proposed.after;
  if (Buffer.byteLength(edited, "utf8") > MAX_WRITE_BYTES)
    throw new Error(tooLargeAfterEdit(args.path));
  return edited;
}

function tooLargeAfterEdit(requested: string): string {
  return `the edited ${requested} would be larger than 1 MB`;
}

export const FILE_TOOLS = [readFileTool, listFilesTool, writeFileTool, editFileTool];
