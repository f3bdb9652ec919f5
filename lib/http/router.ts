import { Hono, type Context } from "hono";
import { AppError } from "../errors";
import { ANSWERED_LATER, answerWriterOf, clientGoneIn, headersReleaseOf } from "./node-listener";
import { errorResponse, internalError, type RouteHandler } from "./route";
import { withApiHeaders } from "./security-headers";

export const API_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type ApiMethod = (typeof API_METHODS)[number];

type MethodHandlers = Partial<Record<ApiMethod, RouteHandler>>;

/** One path of the API (`/api/v1/agents/{name}`) and the route each method it implements runs. */
export type ApiPath = { readonly path: string } & MethodHandlers;

/** One row of the route table: what the scope table and the API's document enumerate. */
export type ApiRoute = { method: ApiMethod; path: string; handler: RouteHandler };

export function definePath<Handlers extends MethodHandlers>(
  path: string,
  handlers: Handlers,
): { readonly path: string } & Handlers {
  return { path, ...handlers };
}

function implementedMethods(entry: ApiPath): ApiMethod[] {
  return API_METHODS.filter((method) => entry[method] !== undefined);
}

/** Every method of every path, in the table's order. */
export function listRoutes(paths: readonly ApiPath[]): ApiRoute[] {
  return paths.flatMap((entry) =>
    implementedMethods(entry).map((method) => ({
      method,
      path: entry.path,
      handler: entry[method] as RouteHandler,
    })),
  );
}

function refuseMethod(request: Request, allow: string): Response {
  return errorResponse(
    new AppError(
      "METHOD_NOT_ALLOWED",
      `${request.method} is not allowed on ${new URL(request.url).pathname}; use ${allow}`,
      { headers: { allow } },
    ),
  );
}

/**
 * The API's router (decision 016): each path's routes, 405 with `Allow` for the methods a path does
 * not implement, 404 in the JSON error shape for paths that do not exist, and the API's security
 * headers on every answer. server.ts hands it every request under /api/v1, so none enters Next.
 *
 * Each path registers one handler per method, its route or its refusal, and there is no
 * middleware, so a request usually matches a single handler, which Hono then calls directly
 * rather than through its middleware chain. A long-poll waits inside its handler and every async
 * frame on the way to it is held for the whole wait: the chain cost four per request (issue 18).
 * Where two paths match one target (`/rules/preview`, `/rules/{id}`), the first registered still
 * answers, with its route or its 405. Methods outside the API's (PROPFIND, …) are refused by a
 * second router, consulted only when no handler matched.
 */
export function createApiApp(paths: readonly ApiPath[]): Hono {
  const app = new Hono({ strict: true });
  const refusals = new Hono({ strict: true });
  for (const entry of paths) {
    const routePath = entry.path.replace(/\{(\w+)\}/g, ":$1");
    const methods = implementedMethods(entry);
    for (const method of methods) {
      const handler = entry[method] as RouteHandler;
      app.on(method, routePath, (context) => {
        // HEAD reaches a GET route too, and its answer is remade without a body.
        const writeLater =
          handler.waits && context.req.method === method
            ? answerWriterOf(context.env, withApiHeaders)
            : undefined;
        if (writeLater !== undefined) {
          handler.answerTo(
            context.req.raw,
            context.req.param(),
            clientGoneIn(context.env),
            writeLater,
            headersReleaseOf(context.env),
          );
          return ANSWERED_LATER;
        }
        const clientGone = handler.waits ? clientGoneIn(context.env) : undefined;
        return handler(context.req.raw, context.req.param(), clientGone).then(
          withApiHeaders,
          internalError,
        );
      });
    }
    const allow = methods.join(", ");
    const refuse = (context: Context): Response =>
      context.req.method === "OPTIONS"
        ? new Response(null, { status: 204, headers: { allow: `${allow}, OPTIONS` } })
        : refuseMethod(context.req.raw, allow);
    const unimplemented = API_METHODS.filter((method) => !methods.includes(method));
    app.on([...unimplemented, "OPTIONS"], routePath, (context) => withApiHeaders(refuse(context)));
    refusals.all(routePath, refuse);
  }
  refusals.notFound((context) =>
    errorResponse(
      new AppError(
        "ROUTE_NOT_FOUND",
        `no route ${context.req.method} ${new URL(context.req.url).pathname}`,
      ),
    ),
  );
  app.notFound(async (context) => withApiHeaders(await refusals.fetch(context.req.raw)));
  app.onError(internalError);
  return app;
}

/** Whether a request target belongs to the API's router rather than Next's. */
export function isApiTarget(target: string): boolean {
  return /^\/api\/v1(\/|\?|$)/.test(target);
}
