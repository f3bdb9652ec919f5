import { z } from "zod";

/** `GET /openapi.json`: an OpenAPI 3.1 document, checked in full by a validator in the tests. */
export const openApiDocumentSchema = z.object({
  openapi: z.string().startsWith("3.1"),
  info: z.object({ title: z.string(), version: z.string(), description: z.string().optional() }),
  paths: z.record(z.string(), z.unknown()),
  components: z
    .object({
      securitySchemes: z.record(z.string(), z.unknown()).optional(),
      responses: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});
