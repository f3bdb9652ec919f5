import { pageSchema } from "../../shared/api/page";
import { rulePreviewSchema, ruleSuggestionSchema, ruleViewSchema } from "../../shared/api/rule";
import { getDb } from "../../db";
import { defineRoute } from "../../http/route";
import { definePath } from "../../http/router";
import { listRules, previewRule, suggestRule } from "../../rules/data";
import { createRule, deleteRule, updateRule } from "../../rules/mutations";
import {
  createRuleSchema,
  previewRuleSchema,
  ruleParamsSchema,
  ruleSuggestionParamsSchema,
  updateRuleSchema,
} from "../../rules/schema";

// A rule is standing permission: only the `admin` scope writes one; reading is like the history.
export const rules = definePath("/api/v1/rules", {
  GET: defineRoute(
    {
      access: "human",
      scopes: ["admin", "decide", "read"],
      responses: { 200: pageSchema(ruleViewSchema) },
    },
    async () => ({ items: await listRules(getDb()), nextCursor: null }),
  ),
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["admin"],
      body: createRuleSchema,
      status: 201,
      responses: { 201: ruleViewSchema },
    },
    ({ actor, body }) => createRule(getDb(), actor, body),
  ),
});

export const rule = definePath("/api/v1/rules/{id}", {
  PATCH: defineRoute(
    {
      access: "lead",
      scopes: ["admin"],
      params: ruleParamsSchema,
      body: updateRuleSchema,
      responses: { 200: ruleViewSchema },
    },
    ({ actor, params, body }) => updateRule(getDb(), actor, params.id, body),
  ),
  DELETE: defineRoute(
    {
      access: "lead",
      scopes: ["admin"],
      params: ruleParamsSchema,
      responses: { 200: ruleViewSchema },
    },
    ({ actor, params }) => deleteRule(getDb(), actor, params.id),
  ),
});

export const rulePreview = definePath("/api/v1/rules/preview", {
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["admin"],
      body: previewRuleSchema,
      responses: { 200: rulePreviewSchema },
    },
    ({ body }) => previewRule(getDb(), body),
  ),
});

export const ruleSuggestion = definePath("/api/v1/requests/{id}/rule-suggestion", {
  GET: defineRoute(
    {
      access: "human",
      scopes: ["admin", "decide", "read"],
      params: ruleSuggestionParamsSchema,
      responses: { 200: ruleSuggestionSchema },
    },
    ({ params }) => suggestRule(getDb(), params.id),
  ),
});
