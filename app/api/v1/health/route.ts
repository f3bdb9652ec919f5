import { getDb, isDatabaseReachable } from "@/lib/db";
import { defineRoute, jsonResponse, otherMethods } from "@/lib/http/route";

export const GET = defineRoute({ access: "public", scopes: [] }, async () => {
  const isDbUp = await isDatabaseReachable(getDb());
  return jsonResponse({ ok: isDbUp, db: isDbUp ? "up" : "down" }, { status: isDbUp ? 200 : 503 });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods({ GET });
