import type { Prisma } from "../generated/prisma/client";
import type { ToolRisk, ToolRiskReason } from "../shared/protocol/tool-risk";
import { groupReasonsByKind } from "../shared/protocol/reason-kinds";
import type { ShellAnalysis } from "../shared/protocol/shell-command";
import { byClassDescending } from "../shared/protocol/tool-risk-schema";

/**
 * What a card (a tool_approval's `payload.risk`) and a recorded call (`tool_calls.risk`) keep of
 * the gate's judgement, at most this many bytes of JSON (decision 090). A judgement grows with its
 * command: about 200 bytes of parse and reasons per character of `a;a;…`, so a command of 9,000
 * made a card of 1.7 MB, and the board and the inbox read every pending card. An ordinary
 * judgement is about a thousand bytes and is kept whole.
 */
export const MAX_STORED_RISK_BYTES = 64 * 1024;

/** Room kept for the notes that say what was left out, and the fields beside the reasons. */
const NOTES_ALLOWANCE = 1_024;

function byteLengthOf(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/**
 * The reasons a budget keeps: one of each kind before any repeat (`groupReasonsByKind`), the
 * higher classes first, so that what the Lead reads covers as many kinds as fit.
 */
function reasonsWithin(
  reasons: readonly ToolRiskReason[],
  analysis: ShellAnalysis | undefined,
  budget: number,
): ToolRiskReason[] {
  const groups = groupReasonsByKind(reasons, analysis);
  const firsts = groups.flatMap((group) => group.slice(0, 1));
  const repeats = groups.flatMap((group) => group.slice(1));
  const kept: ToolRiskReason[] = [];
  let used = 0;
  for (const reason of [...firsts.sort(byClassDescending), ...repeats.sort(byClassDescending)]) {
    const length = byteLengthOf(reason) + 1;
    if (used + length > budget) continue;
    kept.push(reason);
    used += length;
  }
  return kept;
}

/**
 * The judgement as stored, with its parse or without. Past the budget the parse is dropped (the
 * card then shows the command whole, as for a command too long to parse) and then the reasons it
 * cannot hold. Each omission is said first, in a reason of the judgement's own class, so the card
 * lists it above the rest. The class, its code and `isBeyondAllowRules` are always kept: the
 * card's badge and the rule suggestion read them.
 */
function storedWithin(risk: ToolRisk, keepsParse: boolean): Prisma.InputJsonObject {
  const { analysis, isBeyondAllowRules, ...recorded } = risk;
  const stored: ToolRisk = keepsParse ? risk : recorded;
  if (byteLengthOf(stored) <= MAX_STORED_RISK_BYTES) {
    return stored as unknown as Prisma.InputJsonObject;
  }
  const { reasons, ...verdict } = recorded;
  const notes: ToolRiskReason[] = [];
  if (keepsParse && analysis) {
    notes.push({
      class: risk.class,
      message: `the command's parse is not kept with this card (over ${MAX_STORED_RISK_BYTES.toLocaleString("en-US")} bytes): read the command whole`,
    });
  }
  const budget = MAX_STORED_RISK_BYTES - NOTES_ALLOWANCE;
  const kept = reasonsWithin(reasons, analysis, budget);
  if (kept.length < reasons.length) {
    const omitted = reasons.length - kept.length;
    notes.push({
      class: risk.class,
      message: `${omitted.toLocaleString("en-US")} more ${omitted === 1 ? "reason is" : "reasons are"} not kept, of the ${reasons.length.toLocaleString("en-US")} the gate gave: one of each kind is`,
    });
  }
  return {
    ...verdict,
    ...(keepsParse && isBeyondAllowRules ? { isBeyondAllowRules } : {}),
    reasons: [...notes, ...kept],
  } as Prisma.InputJsonObject;
}

/** What a card keeps: the judgement with its parse, within the budget. */
export function toStoredRisk(risk: ToolRisk): Prisma.InputJsonObject {
  return storedWithin(risk, true);
}

/** A recorded call keeps the class and its reasons, not the parse: its card, if any, has that. */
export function toRecordedRisk(risk: ToolRisk): Prisma.InputJsonObject {
  return storedWithin(risk, false);
}
