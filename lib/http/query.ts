import { z } from "zod";

/**
 * A whole number in a query string, written plainly in decimal. Stricter than `z.coerce`, which
 * would read "" as 0, "0x10" as 16 and "1e3" as 1000.
 */
export function queryInteger(bounds: { min: number; max: number }) {
  return z
    .string()
    .regex(/^\d{1,16}$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(bounds.min).max(bounds.max));
}
