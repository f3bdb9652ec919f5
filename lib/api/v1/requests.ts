import { z } from "zod";
import { pageSchema } from "../../shared/api/page";
import { requestViewSchema } from "../../shared/api/request";
import { getDb } from "../../db";
import { defineRoute, jsonResponse } from "../../http/route";
import { definePath } from "../../http/router";
import { listRequests, waitForRequest } from "../../requests/data";
import { getEventHub } from "../../realtime/event-hub";
import { decideRequest, submitRequest } from "../../requests/mutations";
import { exportHeaders, parseExportFormat, streamRequestsExport } from "../../requests/export";
import {
  createRequestSchema,
  exportRequestsQuerySchema,
  getRequestQuerySchema,
  listRequestsQuerySchema,
  requestParamsSchema,
  respondSchema,
} from "../../requests/schema";

export const requests = definePath("/api/v1/requests", {
  GET: defineRoute(
    {
      access: "human",
      scopes: ["admin", "decide", "read"],
      query: listRequestsQuerySchema,
      responses: { 200: pageSchema(requestViewSchema) },
    },
    ({ query }) => listRequests(getDb(), query),
  ),
  POST: defineRoute(
    {
      access: "agent",
      scopes: [],
      body: createRequestSchema,
      agentRate: "requests",
      responses: { 200: requestViewSchema, 201: requestViewSchema },
    },
    async ({ actor, body }) => {
      const { request, isCreated } = await submitRequest(getDb(), actor, body);
      return jsonResponse(request, { status: isCreated ? 201 : 200 });
    },
  ),
});

/** Listed before `/requests/{id}` in the route table, so `export` is never taken for an id. */
export const requestsExport = definePath("/api/v1/requests/export", {
  GET: defineRoute(
    {
      access: "human",
      scopes: ["admin", "decide", "read"],
      query: exportRequestsQuerySchema,
      errors: ["UNSUPPORTED_EXPORT_FORMAT"],
      responses: {
        200: z.string().meta({
          description:
            "A file download: CSV (text/csv, one header row) or JSON Lines (application/jsonl, one request view per line)",
        }),
      },
    },
    async ({ query: { format, ...filters } }) => {
      const parsed = parseExportFormat(format);
      return new Response(streamRequestsExport(getDb(), filters, parsed), {
        headers: exportHeaders(parsed, new Date()),
      });
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
      errors: ["RATE_LIMITED"],
      responses: { 200: requestViewSchema },
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
      responses: { 200: requestViewSchema },
    },
    ({ actor, params, body }) => decideRequest(getDb(), actor, params.id, body),
  ),
});
