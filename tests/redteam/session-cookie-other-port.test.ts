import { io as connect, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { SESSION_KEY_HEADER } from "../../lib/shared/auth/session-key";
import { callApi, signedInHuman } from "../route-client";
import { startConsoleServer } from "../support/console-server";

/**
 * Red team, round ten: a browser sends the console's session cookie to every port of its host
 * name, so a server on another port (an agent's dev preview the Lead opens, say) receives it and
 * can replay it with the console's own Origin. It minted an admin token and made itself a Lead.
 * The cookie alone now signs in nobody: each call also carries the session's key, which the
 * console keeps in storage scoped to its own origin, port included (decision 080).
 */

const OWN_ORIGIN = "http://127.0.0.1:3000";

let consoleServer: Awaited<ReturnType<typeof startConsoleServer>>;
const sockets: Socket[] = [];

beforeAll(async () => {
  consoleServer = await startConsoleServer();
});

afterAll(async () => {
  for (const socket of sockets) socket.disconnect();
  await consoleServer.stop();
  await getDb().$disconnect();
});

function uniqueLabel(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}

/** As the server on another port replays it: the cookie, the console's Origin, JSON. */
async function replay(
  headers: Record<string, string>,
  method: string,
  path: string,
  body?: object,
) {
  return callApi({
    method,
    path,
    ...(body === undefined ? {} : { rawBody: JSON.stringify(body) }),
    headers: { origin: OWN_ORIGIN, "content-type": "application/json", ...headers },
  });
}

function socketOutcome(headers: Record<string, string>, auth: object = {}): Promise<string> {
  const socket = connect(`${consoleServer.baseUrl}/console`, {
    transports: ["websocket"],
    extraHeaders: { origin: consoleServer.baseUrl, ...headers },
    auth,
    reconnection: false,
  });
  sockets.push(socket);
  return new Promise((resolve) => {
    socket.on("connect", () => resolve("connected"));
    socket.on("connect_error", (error) => resolve(error.message));
  });
}

describe("the Lead's cookie caught by a server on another port (red team, round ten)", () => {
  it("mints no token, makes no Lead and reads nothing without the session's key", async () => {
    const lead = await signedInHuman("lead");
    const tokenName = uniqueLabel("stolen");
    const minted = await replay({ cookie: lead.cookie }, "POST", "/api/v1/tokens", {
      name: tokenName,
      scope: "admin",
    });
    expect(minted.status).toBe(401);
    expect(minted.json?.error).toMatchObject({ code: "UNAUTHENTICATED" });
    expect(await getDb().apiToken.count({ where: { name: tokenName } })).toBe(0);

    const email = `${uniqueLabel("attacker")}@example.com`;
    const made = await replay({ cookie: lead.cookie }, "POST", "/api/v1/users", {
      email,
      password: "a long enough password",
      role: "lead",
    });
    expect(made.status).toBe(401);
    expect(await getDb().user.count({ where: { email } })).toBe(0);

    expect((await replay({ cookie: lead.cookie }, "GET", "/api/v1/requests")).status).toBe(401);
    expect((await replay({ cookie: lead.cookie }, "GET", "/api/v1/tokens")).status).toBe(401);
  });

  it("acts with the cookie and its key, as the console's own page does", async () => {
    const lead = await signedInHuman("lead");
    const tokenName = uniqueLabel("own");
    const minted = await replay(lead.headers, "POST", "/api/v1/tokens", {
      name: tokenName,
      scope: "read",
    });
    expect(minted.status).toBe(201);
  });

  it("refuses a key of another session, so a tossed cookie signs the Lead in as no one", async () => {
    // The other port's server can set the host's cookie to a session of its own choosing.
    const lead = await signedInHuman("lead");
    const viewer = await signedInHuman("viewer");
    const tossed = { cookie: viewer.cookie, [SESSION_KEY_HEADER]: lead.sessionKey };
    expect((await replay(tossed, "GET", "/api/v1/requests")).status).toBe(401);
    const forged = { cookie: lead.cookie, [SESSION_KEY_HEADER]: "x".repeat(43) };
    expect((await replay(forged, "GET", "/api/v1/requests")).status).toBe(401);
  });

  it("finds the Lead's own session behind cookies the other port set with a longer path", async () => {
    // Live round ten b: `Set-Cookie: handshake.session_token=…; Path=/api/v1` from the other port
    // is sent before the Lead's own, and only the first was read: the Lead, key and all, was
    // locked out, and signing in again (`Path=/`) could not replace it.
    const lead = await signedInHuman("lead");
    const viewer = await signedInHuman("viewer");
    const key = { [SESSION_KEY_HEADER]: lead.sessionKey };
    const several = Array.from({ length: 6 }, (_, i) => `handshake.session_token=tossed-${i}`);
    for (const first of ["handshake.session_token=tossed", viewer.cookie, several.join("; ")]) {
      const cookie = `${first}; ${lead.cookie}`;
      expect((await replay({ cookie, ...key }, "GET", "/api/v1/tokens")).status).toBe(200);
      const tokenName = uniqueLabel("behind");
      const minted = await replay({ cookie, ...key }, "POST", "/api/v1/tokens", {
        name: tokenName,
        scope: "read",
      });
      expect(minted.status).toBe(201);
      const owner = await getDb().apiToken.findFirstOrThrow({
        where: { name: tokenName },
        include: { user: true },
      });
      expect(owner.user.email).toBe(lead.email);
      expect(await socketOutcome({ cookie }, { sessionKey: lead.sessionKey })).toBe("connected");
    }
    // Signing out ends the Lead's session, not the one whose cookie came first.
    const both = `${viewer.cookie}; ${lead.cookie}`;
    expect((await replay({ cookie: both, ...key }, "POST", "/api/v1/auth/logout")).status).toBe(
      200,
    );
    expect((await replay(lead.headers, "GET", "/api/v1/requests")).status).toBe(401);
    expect((await replay(viewer.headers, "GET", "/api/v1/requests")).status).toBe(200);
  });

  it("still lets a browser carrying a keyless cookie sign in", async () => {
    const lead = await signedInHuman("lead");
    const response = await replay({ cookie: lead.cookie }, "POST", "/api/v1/auth/login", {
      email: lead.email,
      password: lead.password,
    });
    expect(response.status).toBe(200);
    expect(response.json?.sessionKey).toEqual(expect.any(String));
    expect(response.json?.sessionKey).not.toBe(lead.sessionKey);
  });

  it("keeps the console socket shut to the cookie without its key", async () => {
    const lead = await signedInHuman("lead");
    const viewer = await signedInHuman("viewer");
    expect(await socketOutcome({ cookie: lead.cookie })).toBe("UNAUTHENTICATED");
    expect(await socketOutcome({ cookie: viewer.cookie }, { sessionKey: lead.sessionKey })).toBe(
      "UNAUTHENTICATED",
    );
    expect(await socketOutcome({ cookie: lead.cookie }, { sessionKey: lead.sessionKey })).toBe(
      "connected",
    );
    expect(await socketOutcome(lead.headers)).toBe("connected");
  });
});
