import { AppError } from "@/lib/errors";
import { errorResponse } from "@/lib/http/route";

// Unknown /api/v1 paths answer in the API's JSON error shape rather than Next's HTML 404 page.
function routeNotFound(request: Request): Response {
  const { pathname } = new URL(request.url);
  return errorResponse(new AppError("ROUTE_NOT_FOUND", `no route ${request.method} ${pathname}`));
}

export const GET = routeNotFound;
export const POST = routeNotFound;
export const PUT = routeNotFound;
export const PATCH = routeNotFound;
export const DELETE = routeNotFound;
