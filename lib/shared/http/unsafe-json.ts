/**
 * What parsed JSON may not hold, wherever it is read: the API's door (lib/http/route.ts) and the
 * Claude Code hook, which must not let a tool run with input the server never saw.
 */

/** Deeper JSON than any route needs; recursive code further in (zod, jsonb) must never see more. */
const MAX_JSON_DEPTH = 64;

// A UTF-16 surrogate without its pair: JSON may escape one (`"\ud800"`), jsonb refuses to store it.
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function findUnsafeText(text: string): string | null {
  if (text.includes("\u0000")) return "NUL characters are not allowed";
  if (UNPAIRED_SURROGATE.test(text)) return "unpaired UTF-16 surrogates are not allowed";
  return null;
}

/**
 * Walks parsed input with an explicit stack, so no nesting can overflow ours: refuses nesting past
 * MAX_JSON_DEPTH, U+0000 or an unpaired surrogate anywhere (PostgreSQL text and jsonb cannot hold
 * them), and a `__proto__` key anywhere, at the door rather than failing inside. `JSON.parse`
 * makes that key an own property, but zod's records and objects drop it: a tool call's arguments
 * were hashed, matched and shown without it while the tool ran with it (red team: one approval
 * spent on a call with an argument nobody saw).
 */
export function findUnsafeJson(input: unknown): { path: string; problem: string } | null {
  const stack: { value: unknown; path: string; depth: number }[] = [
    { value: input, path: "", depth: 0 },
  ];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, path, depth } = item;
    if (typeof value === "string") {
      const problem = findUnsafeText(value);
      if (problem !== null) return { path, problem };
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_JSON_DEPTH) {
      return { path, problem: `nested deeper than ${MAX_JSON_DEPTH} levels` };
    }
    const entries: [string, unknown][] = Array.isArray(value)
      ? value.map((child, index) => [`[${index}]`, child])
      : Object.entries(value);
    for (const [key, child] of entries.reverse()) {
      const childPath = Array.isArray(value) ? `${path}${key}` : path ? `${path}.${key}` : key;
      const keyProblem =
        key === "__proto__"
          ? "a __proto__ key is not allowed: it would be dropped from what is checked and shown"
          : findUnsafeText(key);
      if (keyProblem !== null) return { path, problem: keyProblem };
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
  return null;
}
