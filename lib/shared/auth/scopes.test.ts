import { describe, expect, it } from "vitest";
import { isScopeWithinRole, scopesForRole, TOKEN_SCOPES } from "./scopes";

describe("token scopes against roles", () => {
  it("lets a Lead hold every scope", () => {
    expect(TOKEN_SCOPES.every((scope) => isScopeWithinRole(scope, "lead"))).toBe(true);
  });

  it("lets a viewer hold only read", () => {
    expect(TOKEN_SCOPES.filter((scope) => isScopeWithinRole(scope, "viewer"))).toEqual(["read"]);
    expect(scopesForRole("viewer")).toEqual(["read"]);
  });
});
