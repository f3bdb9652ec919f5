import type { DecidedBy } from "../shared/api/request";
import type { Responder } from "./mutations";

/** The name a decision is recorded under (`respondedBy`). */
export function responderLabel(responder: Responder): string {
  return responder.kind === "human" ? responder.email : responder.name;
}

/** Taken from the authenticated caller, never from the request body. */
export function decidedByOf(responder: Responder): DecidedBy {
  if (responder.kind === "agent") {
    return { kind: "agent", agent: responder.name, incarnation: responder.incarnation };
  }
  if (responder.via === "token") {
    return {
      kind: "token",
      userId: responder.userId,
      tokenId: responder.tokenId,
      tokenName: responder.tokenName,
    };
  }
  return { kind: "human", userId: responder.userId, sessionId: responder.sessionId };
}
