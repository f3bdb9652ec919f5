import { z } from "zod";
import type { HandshakeClient } from "../../lib/sdk/agent-client";
import type { ToolSpec } from "../models/model";
import type { RequestView } from "../../lib/requests/views";
import type { FileChange } from "../../lib/shared/protocol/file-change";
import type { SandboxState } from "./sandbox";
import type { WorkState } from "./work-state";

/** A tool failure with a code the model and the tests can rely on (SANDBOX_UNAVAILABLE, ...). */
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ToolError";
  }
}

/** What a tool may touch: its own workspace, the API as this agent, and the worker's state. */
export type ToolContext = {
  /** Absolute path of the agent's workspace folder. */
  workspace: string;
  /** Whether bash can run, probed once at worker start; never "try unconfined". */
  sandbox: SandboxState;
  client: HandshakeClient;
  /** The plan gate as the worker last saw it; a raw string, so unknown values fail closed. */
  getGate(): string;
  /** The worker agreed to stop: mutating tools are refused from then on (stopping is one-way). */
  isStopping(): boolean;
  state: WorkState;
  onSubmitPlan(request: RequestView): void;
  /** A question went to the Lead: the worker waits for its answer before the model goes on. */
  onAskLead(request: RequestView): void;
  onIdle(): void;
};

/** The file a write must still find when it runs: the base the gate was asked about. */
export type FileGuard = { baseHash: string };

export type ToolDefinition<Args = unknown> = {
  spec: ToolSpec;
  argsSchema: z.ZodType<Args>;
  /** A refusal that needs no approval to know (the tool cannot run here at all). */
  refuse?(context: ToolContext): ToolError | null;
  /** A file-writing tool's file as it is and as the call would leave it, sent to the gate. */
  snapshot?(args: Args, context: ToolContext): Promise<FileChange>;
  run(args: Args, context: ToolContext, guard?: FileGuard): Promise<string>;
};

/**
 * Builds a tool whose model-facing JSON Schema is generated from the same zod schema that
 * validates its arguments, so the two cannot drift apart.
 */
export function defineTool<Args extends Record<string, unknown>>(definition: {
  name: string;
  description: string;
  argsSchema: z.ZodType<Args>;
  refuse?(context: ToolContext): ToolError | null;
  snapshot?(args: Args, context: ToolContext): Promise<FileChange>;
  run(args: Args, context: ToolContext, guard?: FileGuard): Promise<string>;
}): ToolDefinition<Args> {
  // "input" mode: fields with defaults are optional for the caller. `$schema` is dropped because
  // model APIs want the bare object schema.
  const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(definition.argsSchema, {
    io: "input",
  });
  return {
    spec: { name: definition.name, description: definition.description, inputSchema },
    argsSchema: definition.argsSchema,
    ...(definition.refuse ? { refuse: definition.refuse } : {}),
    ...(definition.snapshot ? { snapshot: definition.snapshot } : {}),
    run: definition.run,
  };
}
