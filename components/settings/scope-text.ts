import type { TokenScope } from "@/lib/shared/auth/scopes";

/** What each scope lets a token do, in the words the Settings page shows beside the choice. */
export const SCOPE_DESCRIPTIONS: Record<TokenScope, string> = {
  admin: "everything a Lead can do",
  decide: "read, and approve or reject requests",
  read: "read agents, requests, tasks and events",
  connect: "register agents of its own and respawn only those (connectors)",
  supervisor: "run workers: read agents and events, issue worker tokens, report exits, respawn",
};
