import { getDb } from "../../db";
import { defineRoute, jsonResponse } from "../../http/route";
import { definePath } from "../../http/router";
import { listRequests, waitForRequest } from "../../requests/data";
import { getEventHub } from "../../realtime/event-hub";
import { decideRequest, submitRequest } from "../../requests/mutations";
import {
  createRequestSchema,
  getRequestQuerySchema,
  listRequestsQuerySchema,
  requestParamsSchema,
  respondSchema,
} from "../../requests/schema";

export const requests = definePath("/api/v1/requests", {
  GET: defineRoute(
    { access: "human", scopes: ["admin", "decide", "read"], query: listRequestsQuerySchema },
    ({ query }) => listRequests(getDb(), query),
  ),
  POST: defineRoute(
    { access: "agent", scopes: [], body: createRequestSchema, agentRate: "requests" },
    async ({ actor, body }) => {
      const { request, isCreated } = await submitRequest(getDb(), actor, body);
      return jsonResponse(request, { status: isCreated ? 201 : 200 });
    },
  ),
});

export const request = definePath("/api/v1/requests/{id}", {
  GET: defineRoute(
    {
      access: "human_or_agent",
      scopes: ["admin", "decide", "read"],
      params: requestParamsSchema,
      query: getRequestQuerySchema,
    },
    ({ actor, params, query, request }) =>
      waitForRequest(getDb(), getEventHub(), actor, params.id, query, request.signal),
  ),
});

export const requestResponses = definePath("/api/v1/requests/{id}/responses", {
  POST: defineRoute(
    {
      access: "lead_or_agent",
      scopes: ["admin", "decide"],
      params: requestParamsSchema,
      body: respondSchema,
    },
    ({ actor, params, body }) => decideRequest(getDb(), actor, params.id, body),
  ),
});
