import { verifyPassword } from "better-auth/crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createScratchDatabase, dropScratchDatabase } from "../../tests/test-database";
import type { PrismaClient } from "../generated/prisma/client";
import { createDb } from "../db";
import { applyMigrations } from "../migrations";
import { DEFAULT_LEAD_EMAIL, ensureFirstLead } from "./mutations";

// First-start behaviour depends on the database being empty, so this file gets its own.
let db: PrismaClient;
let databaseUrl: string;
const adminUrl = inject("adminDatabaseUrl");

beforeAll(async () => {
  databaseUrl = await createScratchDatabase(adminUrl, "handshake_bootstrap");
  await applyMigrations(databaseUrl, { isQuiet: true });
  db = createDb(databaseUrl);
});

afterAll(async () => {
  await db.$disconnect();
  await dropScratchDatabase(adminUrl, databaseUrl);
});

async function storedPasswordHash(email: string): Promise<string> {
  const account = await db.account.findFirstOrThrow({
    where: { user: { email }, providerId: "credential" },
  });
  return account.password ?? "";
}

describe("ensureFirstLead", () => {
  it("creates a Lead with a generated password on an empty database, once", async () => {
    const first = await ensureFirstLead(db, {});
    expect(first).toMatchObject({
      isCreated: true,
      email: DEFAULT_LEAD_EMAIL,
      isPasswordGenerated: true,
    });
    if (!first.isCreated) throw new Error("expected a created lead");
    expect(first.password.length).toBeGreaterThanOrEqual(20);
    const hash = await storedPasswordHash(DEFAULT_LEAD_EMAIL);
    expect(hash).not.toContain(first.password);
    expect(await verifyPassword({ hash, password: first.password })).toBe(true);

    const second = await ensureFirstLead(db, {});
    expect(second).toEqual({ isCreated: false, email: DEFAULT_LEAD_EMAIL });
    expect(await db.user.count({ where: { role: "lead" } })).toBe(1);
  });

  it("creates the configured admin, and never resets an existing one's password", async () => {
    const admin = { email: "Admin@Example.com", password: "configured-password-1" };
    const created = await ensureFirstLead(db, admin);
    expect(created).toMatchObject({
      isCreated: true,
      email: "admin@example.com",
      isPasswordGenerated: false,
    });
    const user = await db.user.findUniqueOrThrow({ where: { email: "admin@example.com" } });
    expect(user.role).toBe("lead");

    const again = await ensureFirstLead(db, { ...admin, password: "a-different-password" });
    expect(again).toEqual({ isCreated: false, email: "admin@example.com" });
    const hash = await storedPasswordHash("admin@example.com");
    expect(await verifyPassword({ hash, password: admin.password })).toBe(true);
  });
});
