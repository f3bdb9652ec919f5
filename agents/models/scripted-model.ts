import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { workerConfigSchema } from "../../lib/shared/agents/schema";
import type {
  Model,
  ModelInput,
  ModelStep,
  ProtocolNotice,
  ToolCall,
  ToolResult,
  TranscriptEntry,
} from "./model";

/**
 * A deterministic model that plays a script from agents/scripts/<name>.json, so the whole
 * model → gate → tools → inbox loop can be demonstrated and tested without an LLM.
 *
 * A script is `{ "description"?: string, "steps": Step[] }`; each step has exactly one of:
 *
 * - `{ "tool": "write_file", "args": {...} }` emits that tool call (one call per model step).
 * - `{ "say": "text" }` attaches the text to the next step the model emits.
 * - `{ "await": "plan_decision" | "tool_decision" | "answer" | "message" }` emits `idle` until the
 *   transcript holds something new of that kind: a plan_decided notice, a tool_approval_decided
 *   notice, a question_answered notice (an `ask_lead` call's outcome), or an inbox message (the worker turns protocol messages into notices, so these are plain ones).
 *   "New" means after the model's last emitted step, and after what an earlier await consumed.
 * - `{ "label": "name" }` marks a place; `{ "goto": "name" }` jumps to it.
 * - `{ "if": condition, "then"?: "label", "else"?: "label" }` jumps on the condition; a missing
 *   branch falls through to the next step. Conditions read the transcript: `plan_approved` and
 *   `plan_rejected` (the newest plan decision), `tool_approved` and `tool_denied` (the newest tool
 *   approval decision), `question_answered` and `question_unanswered` (the newest question's
 *   outcome), and, about the result of the script's most recent `tool` step,
 *   `last_tool_ok`, `last_tool_blocked` (the gate stopped it: the result carries a code) and
 *   `last_tool_needs_approval` (TOOL_APPROVAL_REQUIRED or TOOL_APPROVAL_PENDING).
 *
 * Past the last step the model returns no tool calls, forever.
 */

export const SCRIPTS_DIRECTORY = fileURLToPath(new URL("../scripts/", import.meta.url));

const AWAIT_KINDS = ["plan_decision", "tool_decision", "answer", "message"] as const;
type AwaitKind = (typeof AWAIT_KINDS)[number];

const CONDITIONS = [
  "plan_approved",
  "plan_rejected",
  "tool_approved",
  "tool_denied",
  "question_answered",
  "question_unanswered",
  "last_tool_ok",
  "last_tool_blocked",
  "last_tool_needs_approval",
] as const;
type Condition = (typeof CONDITIONS)[number];

const NEEDS_APPROVAL_CODES: ReadonlySet<string> = new Set([
  "TOOL_APPROVAL_REQUIRED",
  "TOOL_APPROVAL_PENDING",
]);

const labelSchema = z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "labels are [a-z0-9_-]");

const STEP_SCHEMAS = {
  tool: z.strictObject({
    tool: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "tool names are [a-z][a-z0-9_]"),
    args: z.record(z.string(), z.unknown()).default({}),
  }),
  say: z.strictObject({ say: z.string().trim().min(1, "say needs text") }),
  await: z.strictObject({ await: z.enum(AWAIT_KINDS) }),
  label: z.strictObject({ label: labelSchema }),
  goto: z.strictObject({ goto: labelSchema }),
  if: z
    .strictObject({
      if: z.enum(CONDITIONS),
      then: labelSchema.optional(),
      else: labelSchema.optional(),
    })
    .refine((step) => step.then !== undefined || step.else !== undefined, {
      message: "an if needs a then or an else label",
    }),
};
const STEP_KINDS = Object.keys(STEP_SCHEMAS) as (keyof typeof STEP_SCHEMAS)[];

type RawStep = { [Kind in keyof typeof STEP_SCHEMAS]: z.output<(typeof STEP_SCHEMAS)[Kind]> };
type Step = { [Kind in keyof RawStep]: { kind: Kind } & RawStep[Kind] }[keyof RawStep];

// A step is recognised by which keyword it carries, then validated by that keyword's schema, so an
// error names the real problem ("steps[3].await: invalid option") rather than "no union matched".
const stepSchema = z.record(z.string(), z.unknown()).transform((raw, context): Step => {
  const kinds = STEP_KINDS.filter((kind) => kind in raw);
  const kind = kinds[0];
  if (kind === undefined || kinds.length > 1) {
    context.issues.push({
      code: "custom",
      message: `a step has exactly one of ${STEP_KINDS.join(", ")}`,
      input: raw,
    });
    return z.NEVER;
  }
  const parsed = STEP_SCHEMAS[kind].safeParse(raw);
  if (!parsed.success) {
    for (const { path: issuePath, message } of parsed.error.issues) {
      context.issues.push({ code: "custom", path: issuePath, message, input: raw });
    }
    return z.NEVER;
  }
  return { kind, ...parsed.data } as Step;
});

const scriptFileSchema = z
  .strictObject({ description: z.string().optional(), steps: z.array(stepSchema).min(1) })
  .superRefine(({ steps }, context) => {
    const labels = new Set<string>();
    steps.forEach((step, index) => {
      if (step.kind !== "label") return;
      if (labels.has(step.label)) {
        context.addIssue({
          code: "custom",
          path: ["steps", index, "label"],
          message: `duplicate label '${step.label}'`,
        });
      }
      labels.add(step.label);
    });
    steps.forEach((step, index) => {
      const targets =
        step.kind === "goto"
          ? { goto: step.goto }
          : step.kind === "if"
            ? { then: step.then, else: step.else }
            : {};
      for (const [field, target] of Object.entries(targets)) {
        if (target !== undefined && !labels.has(target)) {
          context.addIssue({
            code: "custom",
            path: ["steps", index, field],
            message: `no label '${target}' in this script`,
          });
        }
      }
    });
  });

export type Script = {
  name: string;
  description?: string;
  steps: readonly Step[];
  labels: ReadonlyMap<string, number>;
};

function formatIssuePath(issuePath: readonly PropertyKey[]): string {
  return issuePath
    .map((segment, index) =>
      typeof segment === "number" ? `[${segment}]` : `${index === 0 ? "" : "."}${String(segment)}`,
    )
    .join("");
}

/** Validates parsed JSON as a script; `source` (a file path) names it in errors. */
export function parseScript(json: unknown, name: string, source: string = name): Script {
  const parsed = scriptFileSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => `  ${formatIssuePath(issue.path) || "(root)"}: ${issue.message}`)
      .join("\n");
    throw new Error(`Invalid script ${source}:\n${problems}`);
  }
  const labels = new Map<string, number>();
  parsed.data.steps.forEach((step, index) => {
    if (step.kind === "label") labels.set(step.label, index);
  });
  return { name, description: parsed.data.description, steps: parsed.data.steps, labels };
}

/**
 * Reads and validates agents/scripts/<name>.json (or <directory>/<name>.json). Synchronous: it runs
 * once while a worker starts, before there is anything else to do.
 */
export function loadScript(name: string, directory: string = SCRIPTS_DIRECTORY): Script {
  // The same rule the server applies to an agent's worker config, so no name can escape the
  // directory.
  const nameCheck = workerConfigSchema.shape.script.safeParse(name);
  if (!nameCheck.success) throw new Error(`Invalid script name '${name}': use [a-z0-9_-]`);
  const file = path.join(directory, `${name}.json`);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`Cannot read script ${file}: ${(error as Error).message}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`Invalid script ${file}: not JSON (${(error as Error).message})`, {
      cause: error,
    });
  }
  return parseScript(json, name, file);
}

type Decision = Extract<
  ProtocolNotice,
  { kind: "plan_decided" | "tool_approval_decided" | "question_answered" }
>;

function findLatestDecision<Kind extends Decision["kind"]>(
  transcript: readonly TranscriptEntry[],
  kind: Kind,
): Extract<Decision, { kind: Kind }> | undefined {
  for (let index = transcript.length - 1; index >= 0; index--) {
    const entry = transcript[index];
    if (entry?.role !== "user") continue;
    const decision = entry.notices?.findLast(
      (notice): notice is Extract<Decision, { kind: Kind }> => notice.kind === kind,
    );
    if (decision) return decision;
  }
  return undefined;
}

function findToolResult(
  transcript: readonly TranscriptEntry[],
  toolCallId: string,
): ToolResult | undefined {
  for (let index = transcript.length - 1; index >= 0; index--) {
    const entry = transcript[index];
    if (entry?.role !== "tool") continue;
    const result = entry.results.find((candidate) => candidate.toolCallId === toolCallId);
    if (result) return result;
  }
  return undefined;
}

function isAwaitedEvent(entry: TranscriptEntry, kind: AwaitKind): boolean {
  if (entry.role !== "user") return false;
  switch (kind) {
    case "plan_decision":
      return entry.notices?.some((notice) => notice.kind === "plan_decided") ?? false;
    case "tool_decision":
      return entry.notices?.some((notice) => notice.kind === "tool_approval_decided") ?? false;
    case "answer":
      return entry.notices?.some((notice) => notice.kind === "question_answered") ?? false;
    case "message":
      return (entry.messages?.length ?? 0) > 0;
  }
}

/** Where "new" begins: after the assistant entry holding `callId`, skipping `consumed` entries. */
type Horizon = { callId: string | undefined; consumed: number };

/**
 * Plays one script. The worker keeps one model instance for the life of its process, so the
 * program counter lives here; everything the script reacts to (tool results, decisions, messages)
 * is read from the transcript, so the same transcript always yields the same step.
 *
 * The worker trims old entries off the front of its transcript, so positions are kept relative to
 * the model's own last tool call, found by its id, never as absolute indices.
 */
export class ScriptedModel implements Model {
  private programCounter = 0;
  private callCount = 0;
  private horizon: Horizon = { callId: undefined, consumed: 0 };
  /** The call of the most recent `tool` step, which the last_tool_* conditions inspect. */
  private lastToolCallId: string | undefined;
  private pendingText: string[] = [];

  constructor(private readonly script: Script) {}

  async next({ transcript, tools }: ModelInput): Promise<ModelStep> {
    // Control steps change nothing but the counter and what awaits consumed, so meeting the same
    // step in the same state twice within one call means a loop that would never emit anything.
    const visited = new Set<string>();
    for (;;) {
      const index = this.programCounter;
      const step = this.script.steps[index];
      if (!step) return this.emit([]);
      const visit = `${index}@${this.horizon.consumed}`;
      if (visited.has(visit)) {
        throw new Error(
          `script '${this.script.name}' loops through step ${index} without emitting a tool call`,
        );
      }
      visited.add(visit);

      switch (step.kind) {
        case "tool": {
          if (!tools.some((tool) => tool.name === step.tool)) {
            throw new Error(
              `script '${this.script.name}' step ${index} calls '${step.tool}', which this worker does not offer`,
            );
          }
          // A copy, because a goto can emit the same step again and the worker owns what it gets.
          const call = this.createCall(index, step.tool, structuredClone(step.args));
          this.lastToolCallId = call.id;
          this.programCounter++;
          return this.emit([call]);
        }
        case "say":
          this.pendingText.push(step.say);
          this.programCounter++;
          break;
        case "await": {
          const start = this.findHorizonIndex(transcript);
          const eventIndex = transcript.findIndex(
            (entry, entryIndex) => entryIndex >= start && isAwaitedEvent(entry, step.await),
          );
          if (eventIndex === -1) return this.emit([this.createCall(index, "idle", {})]);
          this.horizon.consumed += eventIndex + 1 - start;
          this.programCounter++;
          break;
        }
        case "label":
          this.programCounter++;
          break;
        case "goto":
          this.programCounter = this.resolveLabel(step.goto);
          break;
        case "if": {
          const target = this.evaluate(step.if, transcript) ? step.then : step.else;
          this.programCounter = target === undefined ? index + 1 : this.resolveLabel(target);
          break;
        }
      }
    }
  }

  private createCall(stepIndex: number, name: string, args: Record<string, unknown>): ToolCall {
    this.callCount++;
    return { id: `call_${stepIndex}_${this.callCount}`, name, args };
  }

  private emit(toolCalls: ToolCall[]): ModelStep {
    // Whatever reached the transcript before this step is history the script had its chance to see.
    const [firstCall] = toolCalls;
    if (firstCall) this.horizon = { callId: firstCall.id, consumed: 0 };
    const text = this.pendingText.join("\n");
    this.pendingText = [];
    return text ? { text, toolCalls } : { toolCalls };
  }

  /** The index of the first transcript entry an await has not yet seen. */
  private findHorizonIndex(transcript: readonly TranscriptEntry[]): number {
    const { callId, consumed } = this.horizon;
    if (callId === undefined) return consumed;
    const anchor = transcript.findLastIndex(
      (entry) => entry.role === "assistant" && entry.toolCalls.some((call) => call.id === callId),
    );
    if (anchor === -1) {
      throw new Error(
        `script '${this.script.name}': its last tool call ${callId} is missing from the transcript; the worker must record every step it is given`,
      );
    }
    return anchor + 1 + consumed;
  }

  private resolveLabel(label: string): number {
    const index = this.script.labels.get(label);
    // parseScript rejects unknown labels, so this only fires for a hand-built Script.
    if (index === undefined) throw new Error(`script '${this.script.name}': no label '${label}'`);
    return index;
  }

  private evaluate(condition: Condition, transcript: readonly TranscriptEntry[]): boolean {
    const lastResult =
      this.lastToolCallId === undefined
        ? undefined
        : findToolResult(transcript, this.lastToolCallId);
    switch (condition) {
      case "plan_approved":
        return findLatestDecision(transcript, "plan_decided")?.isApproved === true;
      case "plan_rejected":
        return findLatestDecision(transcript, "plan_decided")?.isApproved === false;
      case "tool_approved":
        return findLatestDecision(transcript, "tool_approval_decided")?.isApproved === true;
      case "tool_denied":
        return findLatestDecision(transcript, "tool_approval_decided")?.isApproved === false;
      case "question_answered":
        return (findLatestDecision(transcript, "question_answered")?.answer ?? null) !== null;
      case "question_unanswered":
        return findLatestDecision(transcript, "question_answered")?.answer === null;
      case "last_tool_ok":
        return lastResult?.isError === false;
      case "last_tool_blocked":
        return lastResult?.code !== undefined;
      case "last_tool_needs_approval":
        return lastResult?.code !== undefined && NEEDS_APPROVAL_CODES.has(lastResult.code);
    }
  }
}
