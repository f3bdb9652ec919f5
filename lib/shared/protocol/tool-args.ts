import { z } from "zod";

// The arguments of our workers' mutating tools, shared by the tools themselves (agents/tools/*),
// the server (a Lead's edited arguments must be ones the tool accepts) and the console's editor.

export const MAX_COMMAND_LENGTH = 10_000;
export const MAX_WRITE_BYTES = 1024 * 1024;
export const MAX_BATCH_SIZE = 100;

export const toolPathSchema = z.string().min(1).max(4_096);

/** One file of a multi-file write: file `index` of `total` in the batch named `id`. */
export const batchSchema = z.strictObject({
  id: z.string().min(1).max(100).describe("names the batch; the same id on every file of it"),
  index: z.number().int().min(1).max(MAX_BATCH_SIZE).describe("this file's position, from 1"),
  total: z.number().int().min(1).max(MAX_BATCH_SIZE).describe("how many files the batch has"),
});

export const bashArgsSchema = z.strictObject({
  command: z.string().min(1).max(MAX_COMMAND_LENGTH),
  timeoutSeconds: z.number().int().min(1).max(120).default(30),
});

export const writeFileArgsSchema = z.strictObject({
  path: toolPathSchema.describe("path relative to the workspace"),
  content: z
    .string()
    .max(MAX_WRITE_BYTES)
    .refine((content) => new TextEncoder().encode(content).length <= MAX_WRITE_BYTES, {
      message: "content is larger than 1 MB",
    }),
  batch: batchSchema.optional(),
});

export const editFileArgsSchema = z.strictObject({
  path: toolPathSchema.describe("path relative to the workspace"),
  oldText: z.string().min(1).max(MAX_WRITE_BYTES),
  newText: z.string().max(MAX_WRITE_BYTES),
});

/**
 * Claude Code's Bash takes more than a command (description, timeout, run_in_background); those
 * pass through, but without a command string there is nothing for the gate to judge.
 */
const claudeCodeBashArgsSchema = z.looseObject({
  command: z.string().min(1).max(MAX_COMMAND_LENGTH),
});

/** Our tools whose calls can wait on the Lead, and so can be edited before approval. */
const EDITABLE_WORKER_TOOLS: ReadonlyMap<string, z.ZodType<Record<string, unknown>>> = new Map<
  string,
  z.ZodType<Record<string, unknown>>
>([
  ["bash", bashArgsSchema],
  ["write_file", writeFileArgsSchema],
  ["edit_file", editFileArgsSchema],
]);

/** Claude Code names its tools in PascalCase and MCP tools `mcp__<server>__<tool>`; ours are snake_case. */
function isClaudeCodeTool(tool: string): boolean {
  return /^[A-Z]/.test(tool) || tool.startsWith("mcp__");
}

export type EditedArgsCheck =
  { isValid: true; args: Record<string, unknown> } | { isValid: false; message: string };

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map(
      (issue) =>
        `${issue.path.length > 0 ? issue.path.join(".") : "(arguments)"}: ${issue.message}`,
    )
    .join("; ");
}

/**
 * Whether `args` are arguments `tool` takes, as that tool will read them (defaults filled in, so
 * the edited call hashes the same as the caller's parsed retry of it). Our tools are checked by
 * their own schemas; Claude Code's run on the user's machine, where only the connector's hook can
 * judge them, so beyond Bash's command any object passes.
 */
export function parseEditedArgs(tool: string, args: unknown): EditedArgsCheck {
  const schema = isClaudeCodeTool(tool)
    ? tool === "Bash"
      ? claudeCodeBashArgsSchema
      : z.record(z.string(), z.unknown())
    : EDITABLE_WORKER_TOOLS.get(tool);
  if (!schema) return { isValid: false, message: `${tool} calls cannot be edited` };
  const parsed = schema.safeParse(args);
  return parsed.success
    ? { isValid: true, args: parsed.data }
    : { isValid: false, message: `not arguments ${tool} takes: ${describeIssues(parsed.error)}` };
}

/** The field the console edits as text, for tools whose call is one command. */
export function commandFieldOf(tool: string): "command" | null {
  return tool === "bash" || tool === "Bash" ? "command" : null;
}
