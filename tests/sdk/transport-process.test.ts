import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { UnreachableError } from "../../lib/sdk/errors";
import { HttpTransport } from "../../lib/sdk/transport";
import { LOOPBACK_TLS_CERT, LOOPBACK_TLS_KEY } from "../support/loopback-tls";
import { makeTempDir } from "../support/temp-dirs";

// The transport as a process sees it: a process of its own for each call, and TLS on loopback.
// lib/sdk/transport.test.ts has the rest.

const anything = z.unknown();
const CHILD_TIMEOUT_MS = 30_000;

let close: (() => void) | undefined;
afterEach(() => close?.());

/** A loopback server that keeps an idle connection open for longer than a child may run. */
async function listen(): Promise<{ url: string }> {
  const server = createServer((_request, response) =>
    response.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'),
  );
  server.keepAliveTimeout = 10 * CHILD_TIMEOUT_MS;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  close = () => server.close();
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe("HttpTransport in a process of its own", () => {
  it(
    "lets a process end as soon as its last call is answered (the idle connection is not held)",
    async () => {
      // A child its idle connection held open would be killed at CHILD_TIMEOUT_MS, and fail.
      const server = await listen();
      expect((await callInChild(server.url)).answer).toBe('{"ok":true}');
    },
    2 * CHILD_TIMEOUT_MS,
  );

  it("loads TLS only for an https address: a process calling over http never pays for it", async () => {
    const server = await listen();
    expect(await callInChild(server.url)).toEqual({ answer: '{"ok":true}', isTlsLoaded: false });
  });

  it("speaks TLS to an https address, trusting what the process trusts", async () => {
    const server = await listenTls();
    const trusted = path.join(await makeTempDir("handshake-tls-"), "ca.pem");
    writeFileSync(trusted, LOOPBACK_TLS_CERT);
    expect(await callInChild(server.url, { NODE_EXTRA_CA_CERTS: trusted })).toEqual({
      answer: '{"tls":true}',
      isTlsLoaded: true,
    });
  });

  it("refuses an https server whose certificate it cannot trust, as unreachable", async () => {
    const server = await listenTls();
    const transport = new HttpTransport(server.url, "token-token-token-token");
    const call = transport.call("GET", "/me", anything);
    await expect(call).rejects.toBeInstanceOf(UnreachableError);
    await expect(call).rejects.toThrow("DEPTH_ZERO_SELF_SIGNED_CERT");
    expect(server.hits()).toBe(0);
  });
});

/**
 * One call through the transport from a new Node process: what it answered, and whether the
 * process had loaded Node's TLS by then.
 */
async function callInChild(
  url: string,
  env: Record<string, string> = {},
): Promise<{ answer: string; isTlsLoaded: boolean }> {
  const script = `
    import { HttpTransport } from ${JSON.stringify(new URL("../../lib/sdk/transport.ts", import.meta.url).pathname)};
    const anything = { safeParse: (data) => ({ success: true, data }) };
    const answer = await new HttpTransport(${JSON.stringify(url)}, "t").call("GET", "/me", anything);
    console.log(JSON.stringify({
      answer: JSON.stringify(answer),
      isTlsLoaded: process.moduleLoadList.includes("NativeModule tls"),
    }));
  `;
  // Asynchronously: the server answering it lives in this process.
  const child = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", script],
    { encoding: "utf8", timeout: CHILD_TIMEOUT_MS, env: { ...process.env, ...env } },
  );
  expect(child.stderr).toBe("");
  return JSON.parse(child.stdout) as { answer: string; isTlsLoaded: boolean };
}

/** A loopback https server with the tests' self-signed certificate, answering `{"tls":true}`. */
async function listenTls(): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createTlsServer(
    { cert: LOOPBACK_TLS_CERT, key: LOOPBACK_TLS_KEY },
    (_request, response) => {
      hits += 1;
      response.writeHead(200, { "content-type": "application/json" }).end('{"tls":true}');
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  close = () => server.close();
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}
