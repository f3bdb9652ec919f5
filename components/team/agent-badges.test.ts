import { describe, expect, it } from "vitest";
import { describeToolHost } from "./agent-badges";

describe("describeToolHost", () => {
  it("says plainly when bash is disabled or the tools are outside Handshake's sandbox", () => {
    expect(describeToolHost("no_sandbox").label).toBe("no sandbox: bash disabled");
    expect(describeToolHost("no_sandbox").explanation).toContain("apt-get install bubblewrap");
    expect(describeToolHost("external").label).toBe("tools run on the user's machine");
    expect(describeToolHost("sandboxed").label).toBe("sandboxed");
    expect(describeToolHost(null).label).toBe("not reported yet");
  });
});
