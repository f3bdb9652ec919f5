import { z } from "zod";

const objectMap = z.record(z.string(), z.unknown());

/** `GET /openapi.json`: an OpenAPI 3.1 document, checked in full by a validator in the tests. */
export const openApiDocumentSchema = z.object({
  openapi: z.string().startsWith("3.1"),
  info: z.object({ title: z.string(), version: z.string(), description: z.string().optional() }),
  paths: objectMap,
  webhooks: objectMap.optional(),
  components: z
    .object({
      securitySchemes: objectMap.optional(),
      responses: objectMap.optional(),
      schemas: objectMap.optional(),
      parameters: objectMap.optional(),
    })
    .optional(),
});
