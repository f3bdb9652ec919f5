import { z } from "zod";
import { describe, expect, it } from "vitest";
import { invalidInput } from "./errors";

const refusal = (schema: z.ZodType, input: unknown, root?: string) => {
  const parsed = schema.safeParse(input);
  if (parsed.success) throw new Error("the schema took it");
  return invalidInput(parsed.error, root);
};

describe("invalidInput", () => {
  it("names what was parsed, then the field, once each", () => {
    // Round nine: a query's unknown key read "query: body: Unrecognized key", a payload's
    // "payload.body: …".
    const strict = z.strictObject({ wait: z.number().optional() });
    expect(refusal(strict, { foo: 1 }, "query").message).toBe('query: Unrecognized key: "foo"');
    expect(refusal(strict, { wait: "x" }, "query").message).toMatch(/^query\.wait: /);
    expect(refusal(strict, { foo: 1 }).message).toBe('Unrecognized key: "foo"');
    expect(refusal(strict, { wait: "x" }).message).toMatch(/^wait: /);
    expect(refusal(strict, { foo: 1 }, "payload").details).toMatchObject({
      issues: [{ path: "", message: 'Unrecognized key: "foo"' }],
    });
  });
});
