import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer as createHttpServer } from "node:http";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { testSandboxSettings } from "../tests/support/agent-tools";
import { localServerUrl } from "../lib/http/local-url";
import { assertPortFree, describeMissingSandbox, waitForHealth } from "./product-processes";

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "handshake-start-"));
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

describe("npm start's sandbox check", () => {
  it("names the fix when bubblewrap is missing, and leaves no probe folder behind", async () => {
    const line = await describeMissingSandbox(
      dataDir,
      testSandboxSettings({ bwrapPath: "/nonexistent/bwrap" }),
    );
    expect(line).toBe(
      "[sandbox] agents' bash tool is DISABLED: /nonexistent/bwrap not found; install bubblewrap: apt-get install bubblewrap",
    );
    expect(await readdir(path.join(dataDir, "workspaces"))).toEqual([]);
  });

  it("says nothing when the sandbox works", async () => {
    expect(await describeMissingSandbox(dataDir, testSandboxSettings())).toBeNull();
  });
});

async function listening(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return { server, port: address.port };
}

describe("a start on a port another server holds", () => {
  it("is refused, naming the address", async () => {
    const { server, port } = await listening();
    try {
      await expect(assertPortFree("127.0.0.1", port)).rejects.toThrow(
        `127.0.0.1:${port} is already in use`,
      );
    } finally {
      server.close();
    }
  });

  it("goes ahead on a free port, and leaves it free for the server", async () => {
    const { server, port } = await listening();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await assertPortFree("127.0.0.1", port);
    const again = createServer();
    await new Promise<void>((resolve, reject) => {
      again.once("error", reject);
      again.listen(port, "127.0.0.1", resolve);
    });
    again.close();
  });
});

describe("npm start's wait for its server", () => {
  it("reaches a server bound to one address other than 127.0.0.1", async () => {
    // Linux routes all of 127/8 to loopback, but a server on 127.0.0.2 alone does not answer on .1.
    const server = createHttpServer((_request, response) => response.end("{}"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.2", resolve));
    const address = server.address();
    if (typeof address !== "object" || address === null) throw new Error("no port");
    try {
      await expect(fetch(`http://127.0.0.1:${address.port}/api/v1/health`)).rejects.toThrow();
      const neverExits = new Promise<number>(() => {});
      await waitForHealth(localServerUrl("127.0.0.2", address.port), neverExits);
    } finally {
      server.close();
    }
  });
});
