/**
 * Tool calls risky enough to need the Lead's explicit yes even under an approved plan. Deliberately
 * conservative pattern matching: a false positive costs one approval click, a false negative could
 * cost a repository.
 */
const RISKY_COMMANDS: readonly { pattern: RegExp; reason: string }[] = [
  {
    pattern:
      /\brm\s+(-\w*r\w*f\w*|-\w*f\w*r\w*|(-\w+\s+)*--recursive\b.*--force\b|(-\w+\s+)*--force\b.*--recursive\b|-r\s+-f|-f\s+-r)/,
    reason: "recursive forced delete (rm -rf)",
  },
  { pattern: /\bgit\s+(\S+\s+)*push\b/, reason: "git push publishes work outside the workspace" },
  { pattern: /\bsudo\b/, reason: "sudo runs with elevated privileges" },
  {
    pattern: /(^|[^<])>{1,2}\s*(\/(?!dev\/null\b)|~|\.\.\/)/,
    reason: "redirects output outside the workspace",
  },
  {
    pattern: /\b(tee|cp|mv|touch|mkdir|dd)\b[^|;&]*\s(\/(?!dev\/null)|~\/|\.\.\/)/,
    reason: "writes outside the workspace",
  },
];

function isOutsideWorkspace(path: string): boolean {
  return path.startsWith("/") || path.startsWith("~") || path.split(/[\\/]/).includes("..");
}

/** Why this call needs a tool approval, or null when the plan gate alone governs it. */
export function assessToolRisk(tool: string, args: Record<string, unknown>): string | null {
  if (tool === "bash") {
    const command = typeof args.command === "string" ? args.command : "";
    return RISKY_COMMANDS.find(({ pattern }) => pattern.test(command))?.reason ?? null;
  }
  if (tool === "write_file" || tool === "edit_file") {
    const path = typeof args.path === "string" ? args.path : "";
    return isOutsideWorkspace(path) ? `${tool} targets a path outside the workspace` : null;
  }
  return null;
}
