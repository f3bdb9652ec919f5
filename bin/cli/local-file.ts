import { constants } from "node:fs";
import { lstat, open } from "node:fs/promises";
import path from "node:path";
import { targetPathOf, type FileChange } from "../../lib/shared/protocol/file-change";
import {
  baseHashOf,
  readOpenedFile,
  snapshotFileChange,
  type FileOnDisk,
} from "../../lib/shared/protocol/file-snapshot";
import { isInsideWorkspaceRoot, workspaceRootOf } from "../../lib/shared/protocol/tool-risk";

/** Claude Code's file-changing tools, which the hook reads the target of. */
const CLAUDE_CODE_FILE_TOOLS = new Set(["Write", "Edit", "MultiEdit"]);

async function readLocalFile(file: string): Promise<FileOnDisk> {
  try {
    // O_NONBLOCK: a FIFO at the path must not hold the hook (and so the session) forever.
    const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      return await readOpenedFile(handle);
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { kind: "absent" };
    return { kind: "unreadable", detail: code ?? (error as Error).message };
  }
}

/**
 * The file a Write/Edit/MultiEdit would change, read now from the session's machine (a relative
 * path is relative to the call's directory), for the card's diff and the approval's base hash.
 * Undefined for every other tool. A file that cannot be read is sent as such, saying why.
 *
 * A file outside the session's directory is sent as its hash alone: the server would ask the Lead
 * before any read of it, and its content, sent for a diff, was stored on the card and readable
 * with the session's token before anyone decided (an `Edit` of `~/.aws/credentials`).
 */
export async function snapshotLocalFile(
  tool: string,
  args: Record<string, unknown>,
  cwd: string,
): Promise<FileChange | undefined> {
  if (!CLAUDE_CODE_FILE_TOOLS.has(tool)) return undefined;
  const target = targetPathOf(tool, args);
  if (target === null || target === "" || target.includes("\0")) return undefined;
  const found = await readLocalFile(path.resolve(cwd, target));
  const root = workspaceRootOf(cwd);
  if (root === null || !isInsideWorkspaceRoot(target, root)) {
    return { path: target, baseHash: baseHashOf(found), unshown: { reason: "outside_session" } };
  }
  return snapshotFileChange(tool, args, target, found);
}

/** The file a Claude Code tool writes: a diffed tool's, or a notebook's (shown without a diff). */
function writtenPathOf(tool: string, args: Record<string, unknown>): string | null {
  if (tool !== "NotebookEdit")
    return CLAUDE_CODE_FILE_TOOLS.has(tool) ? targetPathOf(tool, args) : null;
  return typeof args.notebook_path === "string" ? args.notebook_path : null;
}

/**
 * The first symbolic link on the way from the session's directory to the file a Write, Edit,
 * MultiEdit or NotebookEdit names (relative to that directory), or null. Through a link the write
 * lands on its target (`notes.txt` → `~/.bashrc`), while the card, the gate and the Lead's path
 * rules judge the name as written: the hook denies such a call rather than show one file under
 * another's name.
 */
export async function findLinkOnTheWay(
  tool: string,
  args: Record<string, unknown>,
  cwd: string,
): Promise<string | null> {
  const target = writtenPathOf(tool, args);
  if (target === null || target === "" || target.includes("\0")) return null;
  const root = workspaceRootOf(cwd);
  if (root === null || !isInsideWorkspaceRoot(target, root)) return null;
  const relative = path.relative(root, path.resolve(cwd, target));
  let current = root;
  for (const segment of relative.split(path.sep).filter(Boolean)) {
    current = path.join(current, segment);
    const info = await lstat(current).catch(() => null);
    // Nothing below a name that does not exist yet can be a link.
    if (info === null) return null;
    if (info.isSymbolicLink()) return path.relative(root, current);
  }
  return null;
}
