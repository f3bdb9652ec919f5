import { getAgentDetail } from "@/lib/agents/data";
import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";

export const GET = defineRoute({ access: "agent", scopes: [] }, ({ actor }) =>
  getAgentDetail(getDb(), actor.name),
);

export const { POST, PUT, PATCH, DELETE } = otherMethods({ GET });
