import { randomUUID } from "node:crypto";
import { z } from "zod";
import { questionPayloadSchema } from "../../lib/shared/protocol/question";
import { defineTool } from "./tool-definition";

// The server validates all of these again; the limits here only spare the model a round trip.
const idSchema = z.string().min(1).max(100);

/**
 * One key per tool invocation: the transport re-sends the same body after a dropped connection,
 * so a submission whose answer was lost is found again instead of being made twice.
 */
function newIdempotencyKey(): string {
  return `tool-${randomUUID()}`;
}

export const sendMessageTool = defineTool({
  name: "send_message",
  description: "Send a message to the Lead ('lead'), another agent (by name) or everyone ('*').",
  argsSchema: z.strictObject({
    to: z.string().min(1).max(40).describe("'lead', an agent name, or '*' for everyone"),
    content: z.string().min(1).max(16_000),
  }),
  run: async (args, context) => {
    const message = await context.client.sendMessage(args.to, args.content);
    return `message ${message.id} sent to ${message.to}`;
  },
});

export const submitPlanTool = defineTool({
  name: "submit_plan",
  description:
    "Submit your plan for the Lead's approval. Tools that change files or run commands stay " +
    "blocked until the Lead approves it.",
  argsSchema: z.strictObject({
    plan: z.string().min(1).max(50_000).describe("what you will do, step by step"),
    summary: z.string().max(200).optional().describe("one line for the Lead's queue"),
  }),
  run: async (args, context) => {
    const request = await context.client.submitRequest({
      type: "plan_approval",
      payload: { ...args },
      idempotencyKey: newIdempotencyKey(),
    });
    context.onSubmitPlan(request);
    return (
      `plan submitted as request ${request.id} (${request.status}). ` +
      "Wait for the Lead's decision before changing anything; it arrives as a message."
    );
  },
});

export const askLeadTool = defineTool({
  name: "ask_lead",
  description:
    "Ask the Lead a question only a person can answer (a fact, or a choice between options). " +
    "You wait until the Lead answers; the answer arrives as a message. Give options when there " +
    "are a few sensible choices, allowText for a free answer, and a default (an option id) that " +
    "stands if nobody answers in time.",
  argsSchema: questionPayloadSchema,
  run: async (args, context) => {
    const request = await context.client.submitRequest({
      type: "question",
      payload: { ...args },
      idempotencyKey: newIdempotencyKey(),
    });
    context.onAskLead(request);
    return `question asked as request ${request.id}; waiting for the Lead's answer`;
  },
});

export const requestShutdownTool = defineTool({
  name: "request_shutdown",
  description: "Ask the Lead to let you stop, e.g. because your work is done.",
  argsSchema: z.strictObject({ reason: z.string().min(1).max(2_000) }),
  run: async (args, context) => {
    const request = await context.client.submitRequest({
      type: "shutdown",
      payload: { reason: args.reason },
      idempotencyKey: newIdempotencyKey(),
    });
    return `shutdown requested as request ${request.id} (${request.status}); wait for the answer`;
  },
});

export const shutdownResponseTool = defineTool({
  name: "shutdown_response",
  description:
    "Answer the Lead's shutdown request. Reject with feedback when stopping now would leave work " +
    "half done.",
  argsSchema: z.strictObject({
    requestId: idSchema,
    approve: z.boolean(),
    feedback: z.string().max(10_000).optional(),
  }),
  run: async (args, context) => {
    const request = await context.client.respond(args.requestId, {
      type: "shutdown_response",
      approve: args.approve,
      feedback: args.feedback,
    });
    return `shutdown request ${request.id} is now ${request.status}`;
  },
});

export const claimTaskTool = defineTool({
  name: "claim_task",
  description: "Claim an open task so that it becomes your current work.",
  argsSchema: z.strictObject({ taskId: idSchema }),
  run: async (args, context) => {
    const task = await context.client.claimTask(args.taskId);
    return `claimed task ${task.id} "${task.title}" (${task.status})`;
  },
});

export const completeTaskTool = defineTool({
  name: "complete_task",
  description: "Mark your task as done.",
  argsSchema: z.strictObject({ taskId: idSchema }),
  run: async (args, context) => {
    const task = await context.client.completeTask(args.taskId);
    return `task ${task.id} "${task.title}" is ${task.status}`;
  },
});

export const idleTool = defineTool({
  name: "idle",
  description: "Stop and wait until a new message arrives.",
  argsSchema: z.strictObject({}),
  run: async (_args, context) => {
    context.onIdle();
    return "waiting for messages";
  },
});

export const PROTOCOL_TOOLS = [
  sendMessageTool,
  submitPlanTool,
  askLeadTool,
  requestShutdownTool,
  shutdownResponseTool,
  claimTaskTool,
  completeTaskTool,
  idleTool,
];
