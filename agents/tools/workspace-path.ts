import { constants } from "node:fs";
import { lstat, open, readlink, realpath, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { SANDBOX_WORKSPACE } from "./sandbox";

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return (
    relative === "" ||
    (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}

function refuse(requested: string): Error {
  return new Error(`${requested} is outside the workspace`);
}

/**
 * bash shows the model its workspace as /workspace; a path it saw there means the same file to the
 * file tools. Only that prefix is mapped: any other absolute path is checked as a host path.
 */
function fromSandboxPath(requested: string): string {
  if (requested === SANDBOX_WORKSPACE) return ".";
  return requested.startsWith(`${SANDBOX_WORKSPACE}/`)
    ? `.${requested.slice(SANDBOX_WORKSPACE.length)}`
    : requested;
}

async function isPresent(candidate: string): Promise<boolean> {
  try {
    // lstat, not stat: a dangling symlink exists and must be resolved, not skipped over.
    await lstat(candidate);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return false;
    throw error;
  }
}

/**
 * Resolves a model-supplied path to an absolute path inside the workspace, or throws. The lexical
 * check catches `..` and foreign absolute paths; resolving the nearest existing ancestor through
 * realpath catches symlinks (including dangling ones) that lead out. The returned path is built on
 * that real ancestor, so the caller does not follow the link again.
 */
export async function resolveWorkspacePath(workspace: string, requested: string): Promise<string> {
  if (requested.includes("\0")) throw new Error("paths cannot contain NUL bytes");
  const target = path.resolve(workspace, fromSandboxPath(requested));
  if (!isInside(workspace, target)) throw refuse(requested);

  const realWorkspace = await realpath(workspace);
  let ancestor = target;
  while (!(await isPresent(ancestor))) ancestor = path.dirname(ancestor);

  let realAncestor: string;
  try {
    realAncestor = await realpath(ancestor);
  } catch {
    // A dangling or looping link: where it leads cannot be checked, so it is treated as outside.
    throw refuse(requested);
  }
  if (!isInside(realWorkspace, realAncestor)) throw refuse(requested);
  return path.join(realAncestor, path.relative(ancestor, target));
}

/**
 * resolveWorkspacePath for a path written to, which must reach its file through no symbolic link.
 * The gate and the Lead's path rules judge the path as written (`notes.txt`, `gh/ci.yml`); a write
 * through a link lands on its target (`.github/ci.yml`), which a rule on `.github/**` would have
 * stopped or sent to the Lead. A write names the file itself.
 */
export async function resolveUnlinkedPath(workspace: string, requested: string): Promise<string> {
  const resolved = await resolveWorkspacePath(workspace, requested);
  const written = path.relative(workspace, path.resolve(workspace, fromSandboxPath(requested)));
  const reached = path.relative(await realpath(workspace), resolved);
  if (written !== reached) throw new LinkedPathError(requested, reached);
  return resolved;
}

export class LinkedPathError extends Error {
  constructor(requested: string, reached: string) {
    super(
      `${requested} goes through a symbolic link to ${reached}: name the file itself, so the gate judges the file written`,
    );
    this.name = "LinkedPathError";
  }
}

function refuseOpened(requested: string, reason: string): Error {
  return new Error(`${requested} ${reason}`);
}

/**
 * Opens a model-supplied path inside the workspace. After resolving it, the last component is
 * opened without following a link, and what was actually opened is checked through
 * /proc/self/fd: a path swapped between the check and the open is caught there. A regular file
 * with other hard links is refused, since its other name may be outside (the sandbox cannot make
 * such a link, EXDEV, but a file placed by someone else could be one).
 */
export async function openInWorkspace(
  workspace: string,
  requested: string,
  flags: number,
  { isWritten = false }: { isWritten?: boolean } = {},
): Promise<FileHandle> {
  const resolve = isWritten ? resolveUnlinkedPath : resolveWorkspacePath;
  const resolved = await resolve(workspace, requested);
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO would otherwise wait forever for a writer.
    handle = await open(resolved, flags | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP")
      throw refuseOpened(requested, "is a symbolic link");
    throw error;
  }
  try {
    const opened = await readlink(`/proc/self/fd/${handle.fd}`);
    if (!isInside(await realpath(workspace), opened)) throw refuse(requested);
    const info = await handle.stat();
    if (info.isFile() && info.nlink > 1)
      throw refuseOpened(
        requested,
        "has other hard links (it may be a file outside the workspace)",
      );
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}
