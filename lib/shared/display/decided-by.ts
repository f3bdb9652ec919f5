import type { DecidedBy, PersonDecidedBy } from "../api/request";
import { toVisibleString } from "./visible-text";

/** What a provenance line reads from a request: the fields every request view carries. */
export type DecidedRequest = {
  status: string;
  respondedBy: string | null;
  decidedBy: DecidedBy | null;
  /** The two-person rule's approvals, which name the Leads that `decidedBy` knows by id. */
  approvals?: readonly { userId: string; email: string }[];
};

function describePolicy(policy: string): string {
  return `policy ${policy.replaceAll("_", " ")}`;
}

/**
 * A token's name as its owner chose it, quoted so that no name can close the quotes and go on as
 * the rest of the line (red team, round ten: a name ending "…' of another Lead").
 */
function quoteTokenName(name: string): string {
  return `'${name.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

function describePerson(
  person: PersonDecidedBy,
  email: string | undefined,
  respondedBy: string | null,
): string {
  const owner = email ?? respondedBy ?? person.userId;
  switch (person.kind) {
    case "human":
      return `${owner} (session)`;
    case "token":
      // Always with its owner: the name is the owner's free text, the owner is the server's.
      return `token ${quoteTokenName(person.tokenName)} of ${owner}`;
    default: {
      const unreachable: never = person;
      return String(unreachable);
    }
  }
}

/**
 * Who decided, in one line, for every kind of provenance: "ada@example.com (session)",
 * "token 'ci-bot'", "agent alice", "timeout (policy reject)", "rule bash(rm *)", "two Leads:
 * ada@example.com (session) and token 'ci-bot' of bob@example.com". History, the timeline, the
 * inbox and the export all say it this way. Requests decided before provenance was recorded fall
 * back to `respondedBy`.
 */
export function describeDecider(request: DecidedRequest): string {
  const { decidedBy } = request;
  switch (decidedBy?.kind) {
    case "human":
    case "token":
      return describePerson(decidedBy, undefined, request.respondedBy);
    case "agent":
      return `agent ${decidedBy.agent}`;
    case "timeout":
      return `timeout (${describePolicy(decidedBy.policy)})`;
    case "rule":
      return `rule ${toVisibleString(decidedBy.pattern)}`;
    case "leads": {
      const emailOf = (userId: string) =>
        request.approvals?.find((approval) => approval.userId === userId)?.email;
      const [first, second] = decidedBy.approvals.map((person) =>
        describePerson(person, emailOf(person.userId), null),
      );
      return `two Leads: ${first} and ${second}`;
    }
    case undefined:
      break;
    default: {
      const unreachable: never = decidedBy;
      return String(unreachable);
    }
  }
  if (request.respondedBy !== "system") return request.respondedBy ?? "—";
  switch (request.status) {
    case "expired":
      return "system (timed out)";
    case "superseded":
      return "system (newer request)";
    case "cancelled":
      return "system (agent stopped)";
    default:
      return "system";
  }
}

/**
 * "approved by token 'ci-bot'", "approved by rule bash(git status*)", "expired: policy reject",
 * "cancelled by system (agent stopped)".
 */
export function describeOutcome(request: DecidedRequest): string {
  if (request.decidedBy?.kind === "timeout") {
    return `${request.status}: ${describePolicy(request.decidedBy.policy)}`;
  }
  return `${request.status} by ${describeDecider(request)}`;
}
