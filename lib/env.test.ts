import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WEB_SERVER_MALLOC_ARENA_MAX, webServerProcessEnv } from "./env";

describe("the web server's process environment (decision 043)", () => {
  afterEach(() => vi.unstubAllEnvs());

  it("limits glibc's malloc arenas when the user set nothing", () => {
    vi.stubEnv("MALLOC_ARENA_MAX", undefined);
    expect(webServerProcessEnv({ PORT: "3000" })).toMatchObject({
      MALLOC_ARENA_MAX: WEB_SERVER_MALLOC_ARENA_MAX,
      PORT: "3000",
    });
    expect(WEB_SERVER_MALLOC_ARENA_MAX).toBe("2");
  });

  it("keeps the user's own setting", () => {
    vi.stubEnv("MALLOC_ARENA_MAX", "8");
    expect(webServerProcessEnv({}).MALLOC_ARENA_MAX).toBe("8");
  });

  it("reaches the server process it starts", () => {
    vi.stubEnv("MALLOC_ARENA_MAX", undefined);
    const seen = execFileSync(process.execPath, ["-p", "process.env.MALLOC_ARENA_MAX"], {
      env: webServerProcessEnv({}),
      encoding: "utf8",
    });
    expect(seen.trim()).toBe("2");
  });
});
