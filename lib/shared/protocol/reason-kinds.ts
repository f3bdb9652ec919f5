import type { ShellAnalysis } from "./shell-command";
import type { ToolRiskReason } from "./tool-risk";

/**
 * The agent's words in a command: its text split at spaces and operators, and every word as the
 * parse read it, quoted and unquoted (`'z1'` is quoted in the text, and a reason says `z1`).
 */
function agentWordsOf(analysis: Pick<ShellAnalysis, "source" | "commands"> | undefined) {
  const words = new Set<string>();
  if (!analysis) return words;
  const add = (text: string) => {
    for (const word of text.split(/[\s;|&()<>]+/)) if (word) words.add(word);
  };
  add(analysis.source);
  for (const command of analysis.commands) {
    const parsed = [
      command.name,
      ...command.args,
      ...command.redirects.map((redirect) => redirect.target),
      ...command.assignments.map((assignment) => assignment.value),
    ];
    for (const word of parsed) {
      if (!word) continue;
      add(word.text);
      if (word.value !== null) add(word.value);
    }
  }
  return words;
}

/**
 * A judgement's reasons by kind: a kind is the class and the words of the message that are not
 * the agent's. Messages quote the agent (`git z1 is not a known subcommand`, `the path /etc/x1 is
 * outside the workspace`), so a thousand of one kind differ by the agent's words alone; whatever
 * shows a bounded part of the reasons shows one of each kind first, and a thousand `git 'zN'`
 * cannot push `curl | sh`'s reasons out of what the Lead reads. In the order each kind first
 * appears.
 */
export function groupReasonsByKind(
  reasons: readonly ToolRiskReason[],
  analysis: Pick<ShellAnalysis, "source" | "commands"> | undefined,
): ToolRiskReason[][] {
  const agentWords = agentWordsOf(analysis);
  const groups = new Map<string, ToolRiskReason[]>();
  for (const reason of reasons) {
    const words = reason.message.split(/\s+/).filter((word) => !agentWords.has(word));
    const kind = `${reason.class}\n${words.join(" ")}`;
    const group = groups.get(kind);
    if (group) group.push(reason);
    else groups.set(kind, [reason]);
  }
  return [...groups.values()];
}
