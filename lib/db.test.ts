import { describe, expect, it } from "vitest";
import {
  isDataException,
  isDatabaseUnavailable,
  isTransactionRollback,
  refusalOfUndoneChange,
} from "./db";

describe("isDatabaseUnavailable", () => {
  it.each([
    [
      "a refused connection",
      { code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:5432" },
    ],
    [
      "an administrator shutdown",
      { code: "57P01", message: "terminating connection due to administrator command" },
    ],
    ["a dropped connection", { message: "Connection terminated unexpectedly" }],
    [
      "a pooled client broken mid-transaction",
      { message: "Client has encountered a connection error and is not queryable" },
    ],
    ["a closed client", { message: "Client was closed and is not queryable" }],
    ["Prisma's pool timeout", { code: "P2024", message: "Timed out fetching a new connection" }],
  ])("takes %s for an unavailable database (503, retry)", (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ["a unique violation", { code: "P2002", message: "Unique constraint failed" }],
    ["a bug", new TypeError("cannot read properties of undefined")],
    ["nothing", null],
  ])("does not take %s for one (500)", (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe("SQLSTATE classes", () => {
  const throughPg = (code: string) => Object.assign(new Error("refused"), { code });
  const throughPrisma = (code: string) => ({
    code: "P2010",
    meta: { driverAdapterError: { cause: { originalCode: code } } },
  });

  it.each([throughPg, throughPrisma])("reads the class however the error came (%#)", (shape) => {
    expect(isDataException(shape("22P02"))).toBe(true);
    expect(isTransactionRollback(shape("40P01"))).toBe(true);
    expect(isTransactionRollback(shape("40001"))).toBe(true);
    for (const other of ["23505", "P0002", "08006", "4001", "40P012"]) {
      expect([isDataException(shape(other)), isTransactionRollback(shape(other))]).toEqual([
        false,
        false,
      ]);
    }
  });

  it.each([throughPg, throughPrisma])(
    "refuses an undone change as retryable, and nothing else (%#)",
    (shape) => {
      const refusals = ["40P01", "57014", "23505", "57P01"].map((code) => {
        const refusal = refusalOfUndoneChange(shape(code));
        return refusal && [refusal.code, refusal.status, refusal.headers["retry-after"]];
      });
      expect(refusals).toEqual([
        ["TRANSACTION_CONFLICT", 503, "1"],
        ["STATEMENT_CANCELED", 503, "1"],
        undefined,
        undefined,
      ]);
    },
  );
});
