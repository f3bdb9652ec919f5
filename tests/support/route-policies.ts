import { readdirSync } from "node:fs";
import path from "node:path";
import type { RouteHandler, RoutePolicy } from "../../lib/http/route";

const API_ROOT = path.resolve(import.meta.dirname, "../../app/api/v1");
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

export type DeclaredRoute = {
  method: string;
  /** `/api/v1/agents/{name}/respawn` */
  path: string;
  policy: RoutePolicy;
  handler: RouteHandler;
};

/**
 * Every method of every route file that is built with defineRoute, read from the files
 * themselves: a new route is in this list the moment it exists.
 */
export async function listDeclaredRoutes(): Promise<DeclaredRoute[]> {
  const files = readdirSync(API_ROOT, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith("route.ts") && !file.includes("[..."))
    .sort();
  const routes: DeclaredRoute[] = [];
  for (const file of files) {
    const routeModule = (await import(path.join(API_ROOT, file))) as Record<string, unknown>;
    const dir = path.dirname(file).replaceAll("\\", "/");
    const routePath = `/api/v1/${dir}`.replace(/\[([a-z]+)\]/g, "{$1}");
    for (const method of METHODS) {
      const handler = routeModule[method] as Partial<RouteHandler> | undefined;
      if (handler?.policy) {
        routes.push({
          method,
          path: routePath,
          policy: handler.policy,
          handler: handler as RouteHandler,
        });
      }
    }
  }
  return routes.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
}
