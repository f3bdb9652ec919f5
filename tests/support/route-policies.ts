import { API_ROUTES } from "../../lib/api/v1/routes";
import type { RouteHandler, RoutePolicy } from "../../lib/http/route";

export type DeclaredRoute = {
  method: string;
  /** `/api/v1/agents/{name}/respawn` */
  path: string;
  policy: RoutePolicy;
  handler: RouteHandler;
};

/** Every method of every path in the route table: a new route is listed the moment it is served. */
export async function listDeclaredRoutes(): Promise<DeclaredRoute[]> {
  return API_ROUTES.map(({ method, path, handler }) => ({
    method,
    path,
    policy: handler.policy,
    handler,
  })).sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
}
