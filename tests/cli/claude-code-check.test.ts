import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saveConnection } from "../../bin/cli/config";
import { getDb } from "../../lib/db";
import { createToken } from "../api/fixtures";
import {
  DOWN_URL,
  ensureCliBundle,
  newConfigDir,
  runCli,
  startHandshake,
  type Handshake,
} from "../support/handshake-cli";

let handshake: Handshake;

beforeAll(async () => {
  await ensureCliBundle();
  handshake = await startHandshake();
}, 60_000);

afterAll(async () => {
  await handshake.stop();
  await getDb().$disconnect();
});

/** `claude-code check` against a connection stored as `install` stores it. */
async function check(connection: { url: string; token: string }) {
  const configDir = await newConfigDir();
  const previous = process.env.HANDSHAKE_CONFIG_DIR;
  process.env.HANDSHAKE_CONFIG_DIR = configDir;
  try {
    await saveConnection(connection);
  } finally {
    process.env.HANDSHAKE_CONFIG_DIR = previous;
  }
  return runCli(["claude-code", "check"], { env: { HANDSHAKE_CONFIG_DIR: configDir } });
}

describe("handshake claude-code check", () => {
  it("passes a connect token", async () => {
    // It read the token's scope where the error body does not keep it, and refused every one.
    const run = await check({ url: handshake.url, token: handshake.connect.token });
    expect(run.stdout).toBe(`server: ${handshake.url} answers\ntoken: a valid \`connect\` token\n`);
    expect(run.code).toBe(0);
  });

  it("names a token of another scope, a refused token and a server that is not there", async () => {
    const admin = await check({ url: handshake.url, token: (await createToken("admin")).token });
    expect(admin.stdout).toContain("token: accepted, but it is not a `connect` token");
    expect(admin.code).toBe(1);
    const read = await check({ url: handshake.url, token: (await createToken("read")).token });
    expect(read.stdout).toContain("token: accepted, but it is not a `connect` token");
    expect(read.code).toBe(1);
    const bogus = await check({ url: handshake.url, token: "hs_lead_not_a_real_token_0000000000" });
    expect(bogus.stdout).toContain("token: refused (UNAUTHENTICATED");
    expect(bogus.code).toBe(1);
    const down = await check({ url: DOWN_URL, token: handshake.connect.token });
    expect(down.stdout).toMatch(/unreachable/);
    expect(down.code).toBe(1);
  });
});
