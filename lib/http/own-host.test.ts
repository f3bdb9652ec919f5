import { expect, it } from "vitest";
import { isOwnHost } from "./own-host";

it("takes addresses, loopback names, HOST and the public URL's name; refuses other names", () => {
  for (const host of ["127.0.0.1:3000", "localhost:3000", "LOCALHOST", "[::1]:3000", "10.0.0.5"]) {
    expect(isOwnHost(host, undefined), host).toBe(true);
  }
  expect(isOwnHost("192.168.1.20:3000", undefined)).toBe(true);
  expect(isOwnHost("handshake.example.com", "https://handshake.example.com")).toBe(true);
  for (const host of ["rebound.example:3000", "127.0.0.1.nip.io", "evil.com", "", "a b"]) {
    expect(isOwnHost(host, undefined), host).toBe(false);
  }
  expect(isOwnHost("other.example.com", "https://handshake.example.com")).toBe(false);
});
