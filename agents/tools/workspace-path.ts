import { lstat, realpath } from "node:fs/promises";
import path from "node:path";

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
  const target = path.resolve(workspace, requested);
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
