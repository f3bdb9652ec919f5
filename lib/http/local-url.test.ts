import { expect, it } from "vitest";
import { localServerUrl } from "./local-url";

it("names a wildcard host by loopback and any other host as it is", () => {
  expect(localServerUrl("0.0.0.0", 3000)).toBe("http://127.0.0.1:3000");
  expect(localServerUrl("::", 3000)).toBe("http://127.0.0.1:3000");
  expect(localServerUrl("127.0.0.1", 3000)).toBe("http://127.0.0.1:3000");
  expect(localServerUrl("localhost", 3000)).toBe("http://localhost:3000");
  expect(localServerUrl("10.1.2.3", 3000)).toBe("http://10.1.2.3:3000");
  expect(localServerUrl("::1", 3000)).toBe("http://[::1]:3000");
});
