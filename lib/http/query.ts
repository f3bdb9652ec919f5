import { z } from "zod";

type Bounds = { min: number; max: number };

function integerInQuery(bounds: Bounds) {
  return z
    .string()
    .regex(/^\d{1,16}$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(bounds.min).max(bounds.max));
}

/** What the API's document says of one: a number in its bounds, not the string it arrives as. */
function shownAs(bounds: Bounds) {
  return { type: "integer", minimum: bounds.min, maximum: bounds.max } as const;
}

/**
 * A whole number in a query string, written plainly in decimal. Stricter than `z.coerce`, which
 * would read "" as 0, "0x10" as 16 and "1e3" as 1000.
 */
export function queryInteger(bounds: Bounds) {
  return integerInQuery(bounds).meta(shownAs(bounds));
}

/** The same, `fallback` when the query leaves it out. */
export function queryIntegerOr(fallback: number, bounds: Bounds) {
  return integerInQuery(bounds)
    .default(fallback)
    .meta({ ...shownAs(bounds), default: fallback });
}
