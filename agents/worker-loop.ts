import { writeFile } from "node:fs/promises";
import type { MessageView } from "../lib/messages/views";
import { describeAnswer, questionResponseSchema } from "../lib/shared/protocol/question";
import { editedPlanOf, toolEditsOf } from "../lib/shared/protocol/edits";
import type { RequestView } from "../lib/requests/views";
import type { HandshakeClient } from "../lib/sdk/agent-client";
import { ApiError } from "../lib/sdk/errors";
import type { Model, ProtocolNotice, ToolResult, TranscriptEntry } from "./models/model";
import { dispatchToolCall, TOOL_SPECS } from "./tools/dispatch";
import type { ToolContext } from "./tools/tool-definition";
import type { SandboxState } from "./tools/sandbox";
import { WorkState } from "./tools/work-state";

export type WorkerOptions = {
  client: HandshakeClient;
  model: Model;
  workspace: string;
  /**
   * The start-up probe's verdict (awaited alongside the first call to the server): reported in
   * every heartbeat, and bash runs only when sandboxed.
   */
  sandbox: Promise<SandboxState>;
  stateFile?: string | undefined;
  heartbeatMs: number;
  /** Longest single inbox long-poll while idle (the API caps it at 30 s). */
  idleWaitSeconds?: number;
};

export type WorkerExit = {
  reason: "shutdown_approved" | "stop_approved" | "incarnation_ended";
  code: number;
};

/** Protocol message types the worker itself routes before the model sees anything. */
const PROTOCOL_TYPES = new Set([
  "shutdown",
  "plan_request",
  "plan_approval_response",
  "tool_approval_response",
  "shutdown_response",
  "question_response",
]);

const MAX_TRANSCRIPT_ENTRIES = 200;

/**
 * The agent loop: inbox → protocol routing → model → gated tools → ack. Protocol messages change
 * protocol state, so they are handled first and only after the server confirms the decision; plain
 * messages reach the model as one block in arrival order. Messages are acknowledged only once the
 * step that consumed them has run, so a crash in between loses nothing.
 */
export class Worker {
  private readonly state = new WorkState();
  private readonly transcript: TranscriptEntry[] = [];
  private gate = "required";
  private name = "";
  private incarnation = 0;
  /**
   * Unset until the first read: the server then starts from the stored ack, so a respawned worker
   * resumes where its agent left off instead of re-reading everything (docs/decisions/011).
   */
  private cursor: number | undefined;
  private isIdle = false;
  /** A risky tool call is waiting for the Lead's approval (raised by the server's gate). */
  private isAwaitingToolApproval = false;
  /** A question to the Lead is open: the model waits for its answer (ask_lead). */
  private isAwaitingAnswer = false;
  private exit: WorkerExit | null = null;
  private sandbox: SandboxState = { status: "no_sandbox", reason: "not probed yet" };
  private heartbeatTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: WorkerOptions) {}

  async run(): Promise<WorkerExit> {
    const [me, sandbox] = await Promise.all([this.options.client.me(), this.options.sandbox]);
    this.sandbox = sandbox;
    this.name = me.name;
    this.incarnation = me.incarnation;
    this.gate = me.gate;
    this.transcript.push({
      role: "user",
      content: [
        `You are ${me.name}, a ${me.role} on a team supervised by a human Lead.`,
        me.prompt ?? "Wait for instructions from the Lead.",
        me.requirePlan
          ? "Before changing anything, submit a plan with submit_plan and wait for approval."
          : "",
      ]
        .filter(Boolean)
        .join("\n\n"),
    });
    this.startHeartbeats();
    try {
      while (!this.exit) {
        try {
          await this.turn();
        } catch (error) {
          // The server answered but could not serve (its database restarting): nothing was
          // acknowledged, so the same messages are read again after a pause.
          if (!(error instanceof ApiError && error.status >= 500)) throw error;
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
      return this.exit;
    } catch (error) {
      // A revoked token means the incarnation ended (forced stop or respawn): leave quietly.
      if (error instanceof ApiError && error.status === 401) {
        return { reason: "incarnation_ended", code: 0 };
      }
      throw error;
    } finally {
      clearInterval(this.heartbeatTimer);
    }
  }

  private currentStatus(): "working" | "idle" | "waiting_approval" | "waiting_answer" | "stopping" {
    if (this.exit) return "stopping";
    if (this.gate === "pending" || this.isAwaitingToolApproval) return "waiting_approval";
    if (this.isAwaitingAnswer) return "waiting_answer";
    return this.isIdle ? "idle" : "working";
  }

  private startHeartbeats(): void {
    const beat = () => {
      this.options.client
        .heartbeat(this.currentStatus(), this.sandbox.status)
        .catch(() => undefined);
    };
    beat();
    this.heartbeatTimer = setInterval(beat, this.options.heartbeatMs);
    this.heartbeatTimer.unref();
  }

  private async turn(): Promise<void> {
    const inbox = await this.options.client.readInbox({
      after: this.cursor,
      waitSeconds: this.isIdle ? (this.options.idleWaitSeconds ?? 25) : 0,
    });
    const notices: ProtocolNotice[] = [];
    const plain: MessageView[] = [];
    // On the first read the server's cursor is the stored ack (or the last message returned,
    // which the loop below reaches anyway).
    let processedUpTo = this.cursor ?? inbox.cursor;
    for (const message of inbox.messages) {
      if (PROTOCOL_TYPES.has(message.type)) {
        const notice = await this.route(message);
        if (notice) notices.push(notice);
      } else {
        plain.push(message);
      }
      processedUpTo = message.id;
      // Whatever arrived behind an approved shutdown stays unacknowledged: the server marks it
      // "not delivered" when this incarnation ends.
      if (this.exit) break;
    }
    this.cursor = processedUpTo;
    if (this.exit) {
      await this.finish(processedUpTo);
      return;
    }
    if (notices.length > 0 || plain.length > 0) {
      this.isIdle = false;
      this.remember({
        role: "user",
        content: describeInbox(plain, notices),
        messages: plain,
        notices,
      });
    }
    if (this.isIdle) {
      if (processedUpTo > 0) await this.options.client.ack(processedUpTo);
      return;
    }
    await this.step();
    if (processedUpTo > 0) await this.options.client.ack(processedUpTo);
  }

  /** One model step, its tool calls run to completion through the gated dispatcher. */
  private async step(): Promise<void> {
    const step = await this.options.model.next({
      system: "You are an agent in Handshake. Mutating tools are gated by the Lead's approval.",
      transcript: this.transcript,
      tools: TOOL_SPECS,
    });
    this.remember({
      role: "assistant",
      ...(step.text ? { text: step.text } : {}),
      toolCalls: step.toolCalls,
    });
    if (step.toolCalls.length === 0) {
      this.isIdle = true;
      return;
    }
    const results: ToolResult[] = [];
    for (const call of step.toolCalls) {
      const result = await dispatchToolCall(call, this.toolContext());
      results.push(result);
      if (result.code === "PLAN_GATE_BLOCKED") this.gate = (await this.options.client.me()).gate;
      if (result.code === "TOOL_APPROVAL_REQUIRED" || result.code === "TOOL_APPROVAL_PENDING") {
        this.isAwaitingToolApproval = true;
      }
    }
    this.remember({ role: "tool", results });
  }

  private toolContext(): ToolContext {
    return {
      workspace: this.options.workspace,
      sandbox: this.sandbox,
      client: this.options.client,
      getGate: () => this.gate,
      isStopping: () => this.exit !== null,
      state: this.state,
      onSubmitPlan: () => {
        this.gate = "pending";
      },
      onIdle: () => {
        this.isIdle = true;
      },
      // Like a person who asked, the agent does nothing else until it hears back: the next model
      // turn starts when the answer (or word that none came) is in its inbox.
      onAskLead: () => {
        this.isAwaitingAnswer = true;
        this.isIdle = true;
      },
    };
  }

  /** Applies one protocol message, after confirming it with the server. */
  private async route(message: MessageView): Promise<ProtocolNotice | null> {
    const requestId =
      typeof message.metadata.requestId === "string" ? message.metadata.requestId : null;
    if (message.type === "plan_request") {
      this.gate = (await this.options.client.me()).gate;
      return { kind: "plan_required", reason: message.content };
    }
    if (!requestId) return null;
    // A request we may not see (another incarnation's) is ignored; any other failure propagates,
    // so the message is read again rather than acknowledged unapplied.
    const request = await this.options.client.getRequest(requestId).catch((error: unknown) => {
      if (error instanceof ApiError && (error.status === 403 || error.status === 404)) return null;
      throw error;
    });
    // Never act on a message alone: the server's record is the decision.
    if (!request || request.incarnation !== this.incarnation) return null;

    switch (message.type) {
      case "shutdown":
        return this.answerShutdown(requestId, request.status);
      case "plan_approval_response": {
        if (request.status === "pending") return null;
        this.gate = (await this.options.client.me()).gate;
        const editedPlan = request.status === "approved" ? editedPlanOf(request.response) : null;
        return {
          kind: "plan_decided",
          requestId,
          isApproved: request.status === "approved",
          feedback: request.feedback,
          ...(editedPlan === null ? {} : { editedPlan }),
        };
      }
      case "tool_approval_response": {
        if (request.status === "pending") return null;
        this.isAwaitingToolApproval = false;
        const edits = request.status === "approved" ? toolEditsOf(request.response) : null;
        return {
          kind: "tool_approval_decided",
          requestId,
          isApproved: request.status === "approved",
          feedback: request.feedback,
          ...(edits ? { editedArgs: edits.editedArgs } : {}),
        };
      }
      case "question_response":
        return this.readAnswer(request);
      case "shutdown_response": {
        if (request.status === "pending") return null;
        const isApproved =
          request.status === "approved" ||
          (request.status === "expired" && message.metadata.approve === true);
        if (isApproved) this.exit = { reason: "stop_approved", code: 0 };
        return { kind: "shutdown_decided", requestId, isApproved, feedback: request.feedback };
      }
      default:
        return null;
    }
  }

  private readAnswer(request: RequestView): ProtocolNotice | null {
    if (request.status === "pending") return null;
    this.isAwaitingAnswer = false;
    const parsed = questionResponseSchema.safeParse(request.response);
    return {
      kind: "question_answered",
      requestId: request.id,
      answer: request.status === "answered" && parsed.success ? parsed.data.answer : null,
      isDefault: request.decidedBy?.kind === "timeout",
      feedback: request.feedback,
    };
  }

  /**
   * The Lead asks us to stop. This runs between steps, so the tool call in progress has finished.
   * Half-done multi-file work is a reason to say no; otherwise we say yes and wind down.
   */
  private async answerShutdown(requestId: string, status: string): Promise<ProtocolNotice | null> {
    if (status !== "pending") return null;
    const unfinished = this.state.describeIncompleteBatch();
    if (unfinished) {
      await this.options.client.respond(requestId, {
        type: "shutdown_response",
        approve: false,
        feedback: unfinished,
      });
      return {
        kind: "shutdown_decided",
        requestId,
        isApproved: false,
        feedback: `you declined the Lead's shutdown request: ${unfinished}`,
      };
    }
    await this.options.client.respond(requestId, { type: "shutdown_response", approve: true });
    this.exit = { reason: "shutdown_approved", code: 0 };
    return null;
  }

  private async finish(processedUpTo: number): Promise<void> {
    await this.options.client.heartbeat("stopping", this.sandbox.status).catch(() => undefined);
    if (this.options.stateFile) {
      const snapshot = {
        name: this.name,
        incarnation: this.incarnation,
        workState: this.state.toJSON(),
        transcript: this.transcript,
      };
      await writeFile(this.options.stateFile, JSON.stringify(snapshot, null, 2));
    }
    if (processedUpTo > 0) await this.options.client.ack(processedUpTo);
  }

  private remember(entry: TranscriptEntry): void {
    this.transcript.push(entry);
    // Keep the prompt and the recent past; an unbounded transcript would grow for the agent's life.
    if (this.transcript.length > MAX_TRANSCRIPT_ENTRIES)
      this.transcript.splice(1, this.transcript.length - MAX_TRANSCRIPT_ENTRIES);
  }
}

function describeQuestionOutcome(
  notice: Extract<ProtocolNotice, { kind: "question_answered" }>,
): string {
  const question = `your question ${notice.requestId}`;
  if (notice.answer && notice.isDefault)
    return `Nobody answered ${question} in time; its default stands: ${describeAnswer(notice.answer)}.`;
  if (notice.answer) return `The Lead answered ${question}: ${describeAnswer(notice.answer)}.`;
  if (notice.isDefault)
    return `Nobody answered ${question} in time and it has no default: decide without it.`;
  return `The Lead declined to answer ${question}${notice.feedback ? `: ${notice.feedback}` : ""}.`;
}

function describeToolDecision(
  notice: Extract<ProtocolNotice, { kind: "tool_approval_decided" }>,
): string {
  const feedback = notice.feedback ? ` Feedback: ${notice.feedback}` : "";
  if (!notice.isApproved)
    return `Your risky tool call (${notice.requestId}) was denied.${feedback}`;
  if (!notice.editedArgs)
    return `Your risky tool call (${notice.requestId}) was approved: run it again, exactly as before.${feedback}`;
  const command = notice.editedArgs.command;
  const approved =
    typeof command === "string" ? `the command ${command}` : JSON.stringify(notice.editedArgs);
  return `Your risky tool call (${notice.requestId}) was approved with the Lead's edits: ${approved}. Run it again as before (or with the edited arguments); the edited version is what runs.${feedback}`;
}

function describeInbox(plain: MessageView[], notices: ProtocolNotice[]): string {
  const lines: string[] = [];
  for (const notice of notices) {
    switch (notice.kind) {
      case "plan_decided":
        lines.push(
          `Your plan ${notice.requestId} was ${notice.isApproved ? "approved" : "rejected"}.${notice.feedback ? ` Feedback: ${notice.feedback}` : ""}${notice.isApproved ? "" : " Revise it and submit a new plan."}`,
        );
        if (notice.editedPlan !== undefined)
          lines.push(
            `The Lead edited your plan before approving it. Follow the approved plan, not your own:\n${notice.editedPlan}`,
          );
        break;
      case "plan_required":
        lines.push(`The Lead requires a plan before you change anything: ${notice.reason}`);
        break;
      case "tool_approval_decided":
        lines.push(describeToolDecision(notice));
        break;
      case "question_answered":
        lines.push(describeQuestionOutcome(notice));
        break;
      case "shutdown_decided":
        lines.push(
          notice.isApproved
            ? "The Lead agreed that you stop."
            : `Shutdown: ${notice.feedback ?? "not now"}`,
        );
        break;
      default: {
        const unreachable: never = notice;
        return unreachable;
      }
    }
  }
  if (plain.length > 0) {
    lines.push("New messages, oldest first:");
    for (const message of plain)
      lines.push(`- from ${message.from} (${message.type}): ${message.content}`);
  }
  return lines.join("\n");
}
