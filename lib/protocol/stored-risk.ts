import type { Prisma } from "../generated/prisma/client";
import type { ToolRisk, ToolRiskReason } from "../shared/protocol/tool-risk";
import { TOOL_RISK_CLASSES } from "../shared/protocol/tool-risk-schema";

/**
 * What a card (a tool_approval's `payload.risk`) and a recorded call (`tool_calls.risk`) keep of
 * the gate's judgement, at most this many characters of JSON (decision 090). A judgement grows
 * with its command: about 200 characters of parse and reasons per character of `a;a;…`, so a
 * command of 9,000 made a card of 1.7 MB, and the board and the inbox read every pending card.
 * An ordinary judgement is about a thousand characters and is kept whole.
 */
export const MAX_STORED_RISK_LENGTH = 64 * 1024;

/** Room kept for the notes that say what was left out, and the fields beside the reasons. */
const NOTES_ALLOWANCE = 1_024;

function byClassDescending(a: ToolRiskReason, b: ToolRiskReason): number {
  return TOOL_RISK_CLASSES.indexOf(b.class) - TOOL_RISK_CLASSES.indexOf(a.class);
}

/**
 * The reasons a budget keeps: one of each kind (class and message) before any repeat, the higher
 * classes first, so that what the Lead reads covers as many kinds as fit.
 */
function reasonsWithin(reasons: readonly ToolRiskReason[], budget: number): ToolRiskReason[] {
  const seen = new Set<string>();
  const firsts: ToolRiskReason[] = [];
  const repeats: ToolRiskReason[] = [];
  for (const reason of reasons) {
    const kind = `${reason.class}\n${reason.message}`;
    (seen.has(kind) ? repeats : firsts).push(reason);
    seen.add(kind);
  }
  const kept: ToolRiskReason[] = [];
  let used = 0;
  for (const reason of [...firsts.sort(byClassDescending), ...repeats.sort(byClassDescending)]) {
    const length = JSON.stringify(reason).length + 1;
    if (used + length > budget) break;
    kept.push(reason);
    used += length;
  }
  return kept;
}

/**
 * The judgement as stored. Past the budget the parse is dropped (the card then shows the command
 * whole, as for a command too long to parse) and then the reasons it cannot hold, each omission
 * said in a reason of the judgement's own class. The class, its code and `isBeyondAllowRules` are
 * always kept: the card's badge and the rule suggestion read them.
 */
export function toStoredRisk(risk: ToolRisk): Prisma.InputJsonObject {
  if (JSON.stringify(risk).length <= MAX_STORED_RISK_LENGTH) {
    return risk as unknown as Prisma.InputJsonObject;
  }
  const { analysis, reasons, ...verdict } = risk;
  const notes: ToolRiskReason[] = [];
  if (analysis) {
    notes.push({
      class: risk.class,
      message: `the command's parse is not kept with this card (over ${MAX_STORED_RISK_LENGTH.toLocaleString("en-US")} characters): read the command whole`,
    });
  }
  const kept = reasonsWithin(reasons, MAX_STORED_RISK_LENGTH - NOTES_ALLOWANCE);
  if (kept.length < reasons.length) {
    const omitted = reasons.length - kept.length;
    notes.push({
      class: risk.class,
      message: `${omitted.toLocaleString("en-US")} more ${omitted === 1 ? "reason is" : "reasons are"} not kept with this card, of the ${reasons.length.toLocaleString("en-US")} the gate gave`,
    });
  }
  return { ...verdict, reasons: [...kept, ...notes] } as Prisma.InputJsonObject;
}

/** A recorded call keeps the class and its reasons, not the parse: its card, if any, has that. */
export function toRecordedRisk(risk: ToolRisk): Prisma.InputJsonObject {
  return toStoredRisk({
    class: risk.class,
    ...(risk.code ? { code: risk.code } : {}),
    reasons: risk.reasons,
  });
}
