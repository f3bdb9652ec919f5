import { getAgentDetail } from "@/lib/agents/data";
import { getDb } from "@/lib/db";
import { defineRoute } from "@/lib/http/route";

export const GET = defineRoute({ access: "agent" }, ({ actor }) =>
  getAgentDetail(getDb(), actor.name),
);
