import type { z } from "zod";

/**
 * The one page-cursor codec: a cursor is its fields as JSON in base64url, opaque to clients and
 * checked field by field on the way back in, so a forged or mangled cursor is a 400, never a query.
 */
export function encodeCursor(fields: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(fields)).toString("base64url");
}

/** The cursor's fields if `raw` is one `encodeCursor` made and `schema` accepts; otherwise null. */
export function decodeCursor<T>(raw: string, schema: z.ZodType<T>): T | null {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : null;
}
