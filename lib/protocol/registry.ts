import { AppError } from "../errors";
import type { AgentStatus } from "../shared/agents/schema";
import type { ProtocolTypeDefinition } from "./definition";
import { planApproval } from "./plan-approval";
import { question } from "./question";
import { shutdown } from "./shutdown";
import { toolApproval } from "./tool-approval";

/** Every protocol type. Adding one means a definition file and a line here, nothing else. */
const definitions: readonly ProtocolTypeDefinition[] = [
  planApproval,
  shutdown,
  toolApproval,
  question,
];

const byType = new Map(definitions.map((definition) => [definition.type, definition]));

export const PROTOCOL_TYPES = definitions.map((definition) => definition.type);
export const PROTOCOL_RESPONSE_TYPES = definitions.map((definition) => definition.responseType);

/** The status an agent waits in while its request of each type waits on the Lead. */
export const LEAD_WAITING_STATUSES: Readonly<Record<string, AgentStatus>> = Object.fromEntries(
  definitions.flatMap((definition) => {
    const status = definition.waitingStatus("agent_to_lead");
    return status === null ? [] : [[definition.type, status]];
  }),
);

export function findProtocolType(type: string): ProtocolTypeDefinition | undefined {
  return byType.get(type);
}

export function getProtocolType(type: string): ProtocolTypeDefinition {
  const definition = byType.get(type);
  if (!definition) {
    throw new AppError(
      "UNKNOWN_TYPE",
      `unknown request type '${type}' (known: ${PROTOCOL_TYPES.join(", ")})`,
    );
  }
  return definition;
}
