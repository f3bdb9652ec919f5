import { z } from "zod";

/**
 * The stored shape of a tool call's risk (tool_approval `payload.risk`, the tool_calls `risk`
 * column), for readers of those JSON values. Pure zod with no Node imports, so the console can use
 * it; the classifier itself lives in tool-risk.ts.
 */
export const TOOL_RISK_CLASSES = ["read_only", "workspace", "needs_approval", "refused"] as const;

export const toolRiskClassSchema = z.enum(TOOL_RISK_CLASSES);

/** Orders reasons (or anything with a class) from the highest class down. */
export function byClassDescending(
  a: { class: (typeof TOOL_RISK_CLASSES)[number] },
  b: { class: (typeof TOOL_RISK_CLASSES)[number] },
): number {
  return TOOL_RISK_CLASSES.indexOf(b.class) - TOOL_RISK_CLASSES.indexOf(a.class);
}

const spanSchema = z.object({ start: z.number().int(), end: z.number().int() });

const shellWordSchema = z.object({
  text: z.string(),
  value: z.string().nullable(),
  isGlob: z.boolean(),
  span: spanSchema,
});

export const shellAnalysisSchema = z.object({
  source: z.string(),
  isParseable: z.boolean(),
  problems: z.array(z.object({ message: z.string(), span: spanSchema })),
  commands: z.array(
    z.object({
      name: shellWordSchema.nullable(),
      args: z.array(shellWordSchema),
      assignments: z.array(
        z.object({ name: z.string(), value: shellWordSchema.nullable(), span: spanSchema }),
      ),
      redirects: z.array(
        z.object({
          kind: z.enum(["file", "heredoc", "herestring"]),
          operator: z.string(),
          descriptor: z.string().nullable(),
          target: shellWordSchema.nullable(),
          span: spanSchema,
        }),
      ),
      joiner: z.enum(["|", "|&", ";", "&&", "||", "&", "newline"]).nullable(),
      isPiped: z.boolean(),
      isBackground: z.boolean(),
      isInSubstitution: z.boolean(),
      isInSubshell: z.boolean(),
      // Absent from parses stored before it was recorded.
      isTopLevel: z.boolean().optional(),
      inFunction: z.string().nullable(),
      span: spanSchema,
    }),
  ),
  constructs: z.array(
    z.object({ kind: z.string(), name: z.string().optional(), span: spanSchema }),
  ),
});

export const toolRiskReasonSchema = z.object({
  class: toolRiskClassSchema,
  message: z.string(),
  span: spanSchema.optional(),
});

export const storedToolRiskSchema = z.object({
  class: toolRiskClassSchema,
  code: z.literal("PATH_OUTSIDE_WORKSPACE").optional(),
  reasons: z.array(toolRiskReasonSchema),
  analysis: shellAnalysisSchema.optional(),
});
export type StoredToolRisk = z.infer<typeof storedToolRiskSchema>;
