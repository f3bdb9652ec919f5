import type { z } from "zod";
import { takeAgentRate, type AgentRateKind } from "../agents/limits";
import {
  callerHeadersOf,
  resolveActor,
  resolveCallerAgain,
  type Actor,
  type AgentActor,
  type CallerHeaders,
  type HumanActor,
} from "../auth/actor";
import { isScopeWithinRole, type TokenScope } from "../shared/auth/scopes";
import { getDb, isDatabaseUnavailable, refusalOfUndoneChange } from "../db";
import { AppError, invalidInput, isAppError, type ErrorCode } from "../errors";
import { readJsonBody } from "./body";
import { isOwnHost } from "./own-host";
import { withApiHeaders } from "./security-headers";
import type { ClientGone } from "./client-gone";
import { LongPollAnswer, type AnswerSink } from "../realtime/long-poll";
import { findUnsafeJson } from "../shared/http/unsafe-json";

/**
 * Who may call a route. Reads open to any signed-in human (viewers see everything); mutations
 * that act for the Lead need the `lead` role.
 */
export type Access = "public" | "human" | "lead" | "agent" | "human_or_agent" | "lead_or_agent";

type ActorFor<A extends Access> = A extends "public"
  ? Actor | null
  : A extends "human" | "lead"
    ? HumanActor
    : A extends "agent"
      ? AgentActor
      : Actor;

/** A route's success bodies by status: what its document promises and the API tests hold it to. */
export type ResponseSchemas = Readonly<Partial<Record<number, z.ZodType>>>;

/** What may stand for a wire value before JSON encoding: `Date` becomes a string, `bigint` a number. */
type Encodable<T> = T extends string
  ? T | Date
  : T extends number
    ? T | bigint
    : T extends readonly (infer Item)[]
      ? Encodable<Item>[]
      : T extends object
        ? { [K in keyof T]: Encodable<T[K]> }
        : T;

/** Any success body a route declares, before encoding; checked against the handler's result. */
type DeclaredBody<R extends ResponseSchemas> = Encodable<z.output<NonNullable<R[keyof R]>>>;

type RouteSpec<A extends Access, B, Q, P, R extends ResponseSchemas> = {
  access: A;
  /**
   * The API-token scopes that may call this route (on top of `access`, which the token's owner
   * must meet by role). Empty: no API token may, e.g. routes only agents or sessions use.
   */
  scopes: readonly TokenScope[];
  body?: z.ZodType<B, unknown>;
  query?: z.ZodType<Q, unknown>;
  params?: z.ZodType<P, unknown>;
  /** Status for a successful result that is not already a Response. */
  status?: number;
  /**
   * The success bodies by status (the default status at least). A result that is not a Response
   * must match one at compile time; the API tests parse every JSON answer against them.
   */
  responses: R;
  /** The success body's media types, when it is a download rather than JSON. */
  mediaTypes?: readonly string[];
  /**
   * Error codes it answers beyond those its declaration implies (lib/http/openapi.ts), e.g. a
   * public route that checks credentials itself; its document lists their statuses.
   */
  errors?: readonly ErrorCode[];
  maxBodyBytes?: number;
  /** Counted against the calling agent's per-minute limit once its input is valid. */
  agentRate?: AgentRateKind;
  /**
   * A long-poll: it may hold its answer for its wait. The router then lets the request's context
   * go and the node listener writes the answer when it comes (lib/http/node-listener.ts).
   */
  waits?: true;
};

export type RouteContext<A extends Access, B, Q, P> = {
  request: Request;
  /**
   * For a route that waits, how it hears its client leave: from the connection when the node
   * listener serves it (lib/http/client-gone.ts), else the request's own signal.
   */
  clientGone?: ClientGone;
  actor: ActorFor<A>;
  body: B;
  query: Q;
  params: P;
};

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The statuses the Fetch standard gives no body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A JSON answer that keeps the text it was made from and builds its web body only if something
 * reads it. Node's Response encodes a string body and wraps it in a ReadableStream as it is made,
 * some 20 µs of CPU (issue 18), and the node listener never reads that stream: it writes the text
 * (lib/http/node-listener.ts). What does read the body (a HEAD remade by Hono, a test's
 * `app.request`, an answer the adapter writes itself) gets a Response made from the text then,
 * with the status and the headers as they are at that moment.
 */
class EncodedJsonResponse extends Response {
  #readable: Response | undefined;

  constructor(
    readonly encoded: string,
    init: ResponseInit,
  ) {
    super(null, init);
    // Made without a body, it would not refuse these as a Response made with one does; the
    // listener would then write a body HTTP forbids.
    if (NULL_BODY_STATUSES.has(this.status)) {
      throw new TypeError(`a ${this.status} answer has no body; it cannot carry JSON`);
    }
  }

  #read(): Response {
    this.#readable ??= new Response(this.encoded, {
      status: this.status,
      statusText: this.statusText,
      headers: this.headers,
    });
    return this.#readable;
  }

  override get body(): Response["body"] {
    return this.#read().body;
  }

  override get bodyUsed(): boolean {
    return this.#readable?.bodyUsed ?? false;
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return this.#read().arrayBuffer();
  }

  override blob(): Promise<Blob> {
    return this.#read().blob();
  }

  override bytes(): ReturnType<Response["bytes"]> {
    return this.#read().bytes();
  }

  override formData(): Promise<FormData> {
    return this.#read().formData();
  }

  override json(): Promise<unknown> {
    return this.#read().json();
  }

  override text(): Promise<string> {
    return this.#read().text();
  }

  override clone(): Response {
    return this.#read().clone();
  }
}

/** The text a JSON answer was made from, for the node listener to write as it is. */
export function encodedJsonOf(response: Response): string | undefined {
  return response instanceof EncodedJsonResponse ? response.encoded : undefined;
}

export function jsonResponse(data: unknown, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  headers.set("content-type", "application/json; charset=utf-8");
  headers.set("cache-control", "no-store");
  // Message and event ids are bigserial; they stay far below 2^53, so numbers are exact.
  const body = JSON.stringify(data, (_key, value: unknown) =>
    typeof value === "bigint" ? Number(value) : value,
  );
  return new EncodedJsonResponse(body, { ...init, headers });
}

export function errorResponse(error: AppError): Response {
  return jsonResponse(error.toBody(), { status: error.status, headers: error.headers });
}

/** What a route declares about its callers; read by the scope table test and its document. */
export type RoutePolicy = { access: Access; scopes: readonly TokenScope[] };

/** The request line a refusal names: a request, or what a wait kept of one. */
type RequestLine = { readonly method: string; readonly url: string };

function authorizeScope(policy: RoutePolicy, actor: Actor | null, request: RequestLine): void {
  if (actor?.kind !== "human" || actor.via !== "token") return;
  if (!isScopeWithinRole(actor.scope, actor.role)) {
    throw new AppError(
      "SCOPE_ABOVE_ROLE",
      `this token's scope '${actor.scope}' is above its owner's role '${actor.role}'; revoke it and create one the role allows`,
    );
  }
  if (policy.scopes.includes(actor.scope)) return;
  const route = `${request.method} ${new URL(request.url).pathname}`;
  const needed =
    policy.scopes.length > 0
      ? `it needs a token with scope ${policy.scopes.map((scope) => `'${scope}'`).join(" or ")}`
      : "no API token may call it";
  throw new AppError(
    "INSUFFICIENT_SCOPE",
    `this token's scope '${actor.scope}' does not allow ${route}: ${needed}`,
    { details: { scope: actor.scope, neededScopes: policy.scopes } },
  );
}

function authorize(access: Access, actor: Actor | null): void {
  if (access === "public") return;
  if (!actor)
    throw new AppError("UNAUTHENTICATED", "sign in or send 'Authorization: Bearer <token>'");
  const isHuman = actor.kind === "human";
  const isLead = isHuman && actor.role === "lead";
  const allowed: Record<Exclude<Access, "public">, boolean> = {
    human: isHuman,
    lead: isLead,
    agent: actor.kind === "agent",
    human_or_agent: true,
    lead_or_agent: isLead || actor.kind === "agent",
  };
  if (!allowed[access]) {
    const reason =
      isHuman && !isLead && (access === "lead" || access === "lead_or_agent")
        ? "this action needs the lead role"
        : `this route is for ${access.replaceAll("_", " ")} callers`;
    throw new AppError("FORBIDDEN", reason);
  }
}

/** Refuses a request sent to a name that is not this server's (lib/http/own-host.ts). */
function refuseForeignHost(request: Request): void {
  // The header, as sent: the node adapter makes the URL from it, a Request made in-process may not.
  const host = request.headers.get("host") ?? new URL(request.url).host;
  if (isOwnHost(host)) return;
  throw new AppError(
    "CROSS_SITE_REQUEST",
    `${host} is not a name of this server: use a loopback name, HOST or HANDSHAKE_PUBLIC_URL (a proxy must pass the public Host)`,
  );
}

/**
 * A cookie is sent by the browser whatever page made the request, so a mutation authenticated by
 * the session cookie must come from our own origin. Bearer tokens are never sent implicitly.
 */
function refuseCrossSite(request: Request, actor: Actor | null): void {
  if (SAFE_METHODS.has(request.method)) return;
  if (actor?.kind !== "human" || actor.via !== "session") return;
  const fetchSite = request.headers.get("sec-fetch-site");
  if (fetchSite === "cross-site" || fetchSite === "same-site") {
    throw new AppError(
      "CROSS_SITE_REQUEST",
      "cross-site requests cannot act with a session cookie",
    );
  }
  const origin = request.headers.get("origin");
  if (origin === null) return;
  // Host, never X-Forwarded-Host: a header the caller chooses must not switch the check off.
  const host = request.headers.get("host");
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    throw new AppError("CROSS_SITE_REQUEST", "malformed Origin header");
  }
  if (originHost !== host) {
    throw new AppError("CROSS_SITE_REQUEST", `origin ${origin} may not act on this server`);
  }
}

/** Who a wait answers, kept to read its caller again when it answers (decision 086). */
type WaitingCaller = RequestLine & CallerHeaders & { readonly actor: Actor };

function waitingCallerOf(request: Request, actor: Actor): WaitingCaller {
  return { actor, method: request.method, url: request.url, ...callerHeadersOf(request.headers) };
}

function parseWith<T>(schema: z.ZodType<T, unknown> | undefined, input: unknown, what: string): T {
  if (!schema) return undefined as T;
  const unsafe = findUnsafeJson(input);
  if (unsafe !== null) {
    throw new AppError(
      "INVALID_INPUT",
      `${what}${unsafe.path ? `.${unsafe.path.slice(0, 200)}` : ""}: ${unsafe.problem}`,
    );
  }
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error, what);
  return parsed.data;
}

/**
 * Never throws: a route's answer is handed on by callback (`answerTo`), and an error that cannot
 * be made into an answer would otherwise leave its client with none.
 */
function answerError(error: unknown): Response {
  try {
    return errorResponse(toAppError(error));
  } catch (unanswerable) {
    console.error("[api] an error could not be answered", unanswerable);
    return errorResponse(new AppError("INTERNAL", "internal error"));
  }
}

function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  if (isDatabaseUnavailable(error)) {
    return new AppError("DATABASE_UNAVAILABLE", "the database is unavailable; retry shortly", {
      headers: { "retry-after": "1" },
    });
  }
  const undone = refusalOfUndoneChange(error);
  if (undone) return undone;
  console.error("[api] unexpected error", error);
  return new AppError("INTERNAL", "internal error");
}

/** The answer to what nothing answered: logged, and the API's 500 with its headers. */
export function internalError(error: unknown): Response {
  console.error("[api] unexpected error", error);
  return withApiHeaders(errorResponse(new AppError("INTERNAL", "internal error")));
}

/** A path's parameters as the router decoded them: `{ name: "alice" }` for `/agents/{name}`. */
export type PathParams = Readonly<Record<string, string>>;

/**
 * A declared route: called with the request and its path parameters, it answers in the API's JSON
 * shape whatever happens. Its policy and schemas are readable, for the scope table and the API's
 * document.
 */
export type RouteHandler = ((
  request: Request,
  params?: PathParams,
  clientGone?: ClientGone,
) => Promise<Response>) & {
  /**
   * The same route with its answer handed to `deliver`, once, rather than resolved: the node
   * listener writes a long-poll's answer this way, so that while the route waits its answer is one
   * object the long-poll answers to, not a reaction per layer on the way to the socket (decisions
   * 051, 086). `releaseHeaders`, when given, is called once the route has read all it will of the
   * request's headers: when its wait begins.
   */
  answerTo(
    request: Request,
    params: PathParams,
    clientGone: ClientGone | undefined,
    deliver: (response: Response) => void,
    releaseHeaders?: () => void,
  ): void;
  policy: RoutePolicy;
  schemas: {
    body?: z.ZodType<unknown, unknown>;
    query?: z.ZodType<unknown, unknown>;
    params?: z.ZodType<unknown, unknown>;
  };
  responses: ResponseSchemas;
  mediaTypes: readonly string[];
  errors: readonly ErrorCode[];
  /** The status of a success, when the handler does not choose it itself. */
  status: number;
  agentRate?: AgentRateKind;
  waits: boolean;
};

/**
 * Wraps a route handler: authenticate, authorize (access by kind and role, then the token's
 * scope), parse, call, map the result or error to JSON.
 */
export function defineRoute<
  A extends Access,
  R extends ResponseSchemas,
  B = undefined,
  Q = undefined,
  P = undefined,
>(
  spec: RouteSpec<A, B, Q, P, R>,
  handler: (
    context: RouteContext<A, B, Q, P>,
  ) => Promise<Response | DeclaredBody<R>> | LongPollAnswer<DeclaredBody<R>>,
): RouteHandler {
  const policy: RoutePolicy = { access: spec.access, scopes: spec.scopes };
  const answerWith = (result: Response | DeclaredBody<R>): Response => {
    if (result instanceof Response) return result;
    try {
      return jsonResponse(result, { status: spec.status ?? 200 });
    } catch (error) {
      return answerError(error);
    }
  };
  /**
   * A wait's answer goes only to a caller whose credential still holds: a human still that user,
   * an agent still that incarnation with a token not replaced (worker-token, respawn, revocation).
   * A wait that began before a sign-out, a disable or a revocation hands over nothing after it.
   */
  const stillTheCaller = async (caller: WaitingCaller): Promise<void> => {
    const { actor } = caller;
    const again = await resolveCallerAgain(getDb(), caller);
    const isSame =
      actor.kind === "agent"
        ? again?.kind === "agent" &&
          again.agentId === actor.agentId &&
          again.incarnation === actor.incarnation
        : again?.kind === "human" && again.userId === actor.userId;
    if (!again || !isSame) {
      throw new AppError("UNAUTHENTICATED", "the credential this wait began with no longer holds");
    }
    authorize(spec.access, again);
    authorizeScope(policy, again, caller);
  };
  /**
   * A call's answer on its way to `deliver`: made into the API's JSON, or its error into the error
   * shape, and after a wait only once its caller is checked again, in the answer's own callback
   * rather than in one more callback held for the whole wait. A long-poll holds this one object
   * while it waits, where a promise's reactions held two closures and their context (issue 18).
   */
  class Answering implements AnswerSink<Response | DeclaredBody<R>> {
    constructor(
      private readonly deliver: (response: Response) => void,
      private readonly waitingCaller: WaitingCaller | undefined,
    ) {}

    answer(value: Response | DeclaredBody<R>): void {
      const { deliver, waitingCaller } = this;
      if (!waitingCaller) return deliver(answerWith(value));
      stillTheCaller(waitingCaller).then(
        () => deliver(answerWith(value)),
        (error: unknown) => deliver(answerError(error)),
      );
    }

    fail(error: unknown): void {
      this.deliver(answerError(error));
    }
  }
  // The handler's answer is chained rather than awaited: a long-poll is held for its whole wait
  // in every async frame on the way to it (decision 050), and a long-poll's is handed to a sink.
  const answerTo = async (
    request: Request,
    pathParams: PathParams,
    clientGone: ClientGone | undefined,
    deliver: (response: Response) => void,
    releaseHeaders?: () => void,
  ): Promise<void> => {
    let answering: Answering;
    let pending: Promise<Response | DeclaredBody<R>>;
    try {
      // Before the actor, so a foreign name's sign-in attempts spend none of the sign-in limit.
      refuseForeignHost(request);
      const actor = await resolveActor(getDb(), request.headers);
      authorize(spec.access, actor);
      if (spec.access !== "public") authorizeScope(policy, actor, request);
      refuseCrossSite(request, actor);
      const params = parseWith(spec.params, pathParams, "path");
      const query = parseWith(
        spec.query,
        Object.fromEntries(new URL(request.url).searchParams),
        "query",
      );
      const rawBody = spec.body ? await readJsonBody(request, spec.maxBodyBytes) : undefined;
      const body = parseWith(spec.body, rawBody, "body");
      if (spec.agentRate && actor?.kind === "agent") takeAgentRate(actor.agentId, spec.agentRate);
      const result = handler({
        request,
        clientGone: spec.waits ? (clientGone ?? request.signal) : undefined,
        actor: actor as ActorFor<A>,
        body,
        query,
        params,
      });
      answering = new Answering(
        deliver,
        spec.waits && actor ? waitingCallerOf(request, actor) : undefined,
      );
      if (result instanceof LongPollAnswer) {
        releaseHeaders?.();
        result.answerTo(answering);
        return;
      }
      pending = result;
    } catch (error) {
      deliver(answerError(error));
      return;
    }
    pending.then(
      (value) => answering.answer(value),
      (error: unknown) => answering.fail(error),
    );
  };
  const handle = (
    request: Request,
    pathParams: PathParams = {},
    clientGone?: ClientGone,
  ): Promise<Response> =>
    new Promise((resolve) => void answerTo(request, pathParams, clientGone, resolve));
  return Object.assign(handle, {
    answerTo,
    policy,
    schemas: { body: spec.body, query: spec.query, params: spec.params },
    responses: spec.responses,
    mediaTypes: spec.mediaTypes ?? ["application/json"],
    errors: spec.errors ?? [],
    status: spec.status ?? 200,
    agentRate: spec.agentRate,
    waits: spec.waits === true,
  });
}
