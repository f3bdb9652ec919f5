import { z } from "zod";
import { bulkDecisionSchema } from "../../shared/api/bulk-decision";
import { pageSchema } from "../../shared/api/page";
import { requestViewSchema } from "../../shared/api/request";
import { getDb } from "../../db";
import { defineRoute, jsonResponse } from "../../http/route";
import { definePath } from "../../http/router";
import { decideRequestsInBulk } from "../../requests/bulk";
import { extendRequestDeadline } from "../../requests/deadline";
import { listRequests, waitForRequest } from "../../requests/data";
import { getEventHub } from "../../realtime/event-hub";
import { decideRequest, submitRequest } from "../../requests/mutations";
import { exportHeaders, parseExportFormat, streamRequestsExport } from "../../requests/export";
import {
  bulkRespondSchema,
  createRequestSchema,
  exportRequestsQuerySchema,
  extendDeadlineSchema,
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
      mediaTypes: ["text/csv", "application/jsonl"],
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
      waits: true,
    },
    ({ actor, params, query, clientGone }) =>
      waitForRequest(getDb(), getEventHub(), actor, params.id, query, clientGone),
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

/**
 * One decision for several requests (by id, or an agent's pending ones); each is decided on its
 * own, and the answer lists each one's outcome. Not under `/requests/`, where a fixed segment
 * would shadow `/requests/{id}` for every other method.
 */
export const bulkResponses = definePath("/api/v1/responses", {
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["admin", "decide"],
      body: bulkRespondSchema,
      responses: { 200: bulkDecisionSchema },
    },
    ({ actor, body }) => decideRequestsInBulk(getDb(), actor, body),
  ),
});

/** More time for a pending request waiting on the Lead, within its day-long lifetime. */
export const requestDeadline = definePath("/api/v1/requests/{id}/deadline", {
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["admin", "decide"],
      params: requestParamsSchema,
      body: extendDeadlineSchema,
      responses: { 200: requestViewSchema },
    },
    ({ actor, params, body }) => extendRequestDeadline(getDb(), actor, params.id, body),
  ),
});
