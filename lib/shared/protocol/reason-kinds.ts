import type { ToolRiskReason } from "./tool-risk";

/**
 * A judgement's reasons by kind: a kind is the class and the words of the message that the
 * command does not hold. Messages quote the agent (`git z1 is not a known subcommand`, `the path
 * /etc/x1 is outside the workspace`), so a thousand of one kind differ by the agent's words alone;
 * whatever shows a bounded part of the reasons shows one of each kind first, and a thousand
 * `git zN` cannot push `curl | sh`'s reasons out of what the Lead reads. In the order each kind
 * first appears.
 */
export function groupReasonsByKind(
  reasons: readonly ToolRiskReason[],
  command: string,
): ToolRiskReason[][] {
  const commandWords = new Set(command.split(/[\s;|&()<>]+/).filter(Boolean));
  const groups = new Map<string, ToolRiskReason[]>();
  for (const reason of reasons) {
    const words = reason.message.split(/\s+/).filter((word) => !commandWords.has(word));
    const kind = `${reason.class}\n${words.join(" ")}`;
    const group = groups.get(kind);
    if (group) group.push(reason);
    else groups.set(kind, [reason]);
  }
  return [...groups.values()];
}
