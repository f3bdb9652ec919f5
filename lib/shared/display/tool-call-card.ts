import type { ShellJoiner, SimpleCommand } from "../protocol/shell-command";
import type { ToolRiskClass, ToolRiskReason } from "../protocol/tool-risk";
import { byClassDescending, storedToolRiskSchema } from "../protocol/tool-risk-schema";

/**
 * The card of a tool call, built from the classification the server stored with the request (the
 * one the gate judged), never from a parse done again in the browser: the card and the gate
 * cannot disagree. Pure, so the inbox, history and an editor of a command share it.
 */

export type ShellCardRedirect = { operator: string; descriptor: string | null; target: string };

/** How the command sits in the whole: the operator after it, pipes, substitutions, functions. */
type ShellCardContext = Pick<
  SimpleCommand,
  "joiner" | "isPiped" | "isBackground" | "isInSubstitution" | "isInSubshell" | "inFunction"
>;

export type ShellCardLine = ShellCardContext & {
  /** The simple command exactly as written, redirections included. */
  text: string;
  redirects: ShellCardRedirect[];
  /** Why this part is risky, highest class first. */
  reasons: ToolRiskReason[];
};

/**
 * A reason about no single command, with the text it is about: a `for` list, a `case` subject or
 * a `[[ … ]]` operand is in no command's line, and may be what runs (`${x@P}`).
 */
export type ToolCallCardReason = ToolRiskReason & { excerpt?: string };

export type ToolCallCard = {
  /** Absent when the request carries no readable classification: the card must say so. */
  riskClass: ToolRiskClass | null;
  /** Reasons about no single command (the whole call, or a tool without a parse). */
  reasons: ToolCallCardReason[];
  /** The parsed bash command, one line per simple command; null for other tools. */
  shell: {
    lines: ShellCardLine[];
    problems: string[];
    /** The stored parse is of another text than the command shown: never trust the card. */
    isSourceMismatch: boolean;
  } | null;
};

const JOINER_LABELS: Record<Exclude<ShellJoiner, null>, string> = {
  "|": "pipes its output into the next",
  "|&": "pipes its output and errors into the next",
  ";": "then",
  "&&": "then, if it succeeds",
  "||": "then, if it fails",
  "&": "in the background, then",
  newline: "then",
};

export function describeJoiner(joiner: Exclude<ShellJoiner, null>): string {
  return JOINER_LABELS[joiner];
}

function contains(outer: { start: number; end: number }, inner: { start: number; end: number }) {
  return outer.start <= inner.start && inner.end <= outer.end;
}

/** Builds the card from a tool_approval payload as stored (`tool`, `args`, `risk`). */
export function buildToolCallCard(payload: Record<string, unknown>): ToolCallCard {
  const parsed = storedToolRiskSchema.safeParse(payload.risk);
  if (!parsed.success) return { riskClass: null, reasons: [], shell: null };
  const risk = parsed.data;
  const analysis = risk.analysis;
  if (!analysis) {
    return {
      riskClass: risk.class,
      reasons: [...risk.reasons].sort(byClassDescending),
      shell: null,
    };
  }
  const args = (payload.args ?? {}) as Record<string, unknown>;
  const commands = analysis.commands;
  const lineReasons = commands.map((): ToolRiskReason[] => []);
  const unplaced: ToolCallCardReason[] = [];
  for (const reason of risk.reasons) {
    // The innermost command holding the span: a path inside $(…) belongs to the command it feeds.
    let best = -1;
    commands.forEach((command, index) => {
      if (!reason.span || !contains(command.span, reason.span)) return;
      const width = command.span.end - command.span.start;
      const bestCommand = commands[best];
      if (!bestCommand || width < bestCommand.span.end - bestCommand.span.start) best = index;
    });
    if (best >= 0) lineReasons[best]?.push(reason);
    else if (!reason.span || reason.span.end <= reason.span.start) unplaced.push(reason);
    else {
      unplaced.push({
        ...reason,
        excerpt: analysis.source.slice(reason.span.start, reason.span.end),
      });
    }
  }
  return {
    riskClass: risk.class,
    reasons: unplaced.sort(byClassDescending),
    shell: {
      lines: commands.map((command, index) => ({
        text: analysis.source.slice(command.span.start, command.span.end),
        joiner: command.joiner,
        isPiped: command.isPiped,
        isBackground: command.isBackground,
        isInSubstitution: command.isInSubstitution,
        isInSubshell: command.isInSubshell,
        inFunction: command.inFunction,
        redirects: command.redirects.map((redirect) => ({
          operator: redirect.operator,
          descriptor: redirect.descriptor,
          target:
            redirect.target?.text ?? analysis.source.slice(redirect.span.start, redirect.span.end),
        })),
        reasons: (lineReasons[index] ?? []).sort(byClassDescending),
      })),
      problems: analysis.problems.map((problem) => problem.message),
      isSourceMismatch: analysis.source !== args.command,
    },
  };
}
