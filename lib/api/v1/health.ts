import { getDb, isDatabaseReachable } from "../../db";
import { defineRoute, jsonResponse } from "../../http/route";
import { definePath } from "../../http/router";

export const health = definePath("/api/v1/health", {
  GET: defineRoute({ access: "public", scopes: [] }, async () => {
    const isDbUp = await isDatabaseReachable(getDb());
    return jsonResponse({ ok: isDbUp, db: isDbUp ? "up" : "down" }, { status: isDbUp ? 200 : 503 });
  }),
});
