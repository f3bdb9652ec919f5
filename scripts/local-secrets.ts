import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";

const localSecretsSchema = z.object({
  sessionSecret: z.string().min(32),
  postgresPassword: z.string().min(16),
});
export type LocalSecrets = z.infer<typeof localSecretsSchema>;

/**
 * Secrets `npm start` needs when the user configured none: generated on first start and kept
 * (mode 600) beside the embedded database so sessions and the cluster survive restarts.
 */
export async function loadOrCreateLocalSecrets(dataDir: string): Promise<LocalSecrets> {
  const file = path.resolve(dataDir, "secrets.json");
  if (existsSync(file)) {
    const parsed = localSecretsSchema.safeParse(JSON.parse(await readFile(file, "utf8")));
    if (parsed.success) return parsed.data;
    throw new Error(`${file} is not valid; delete it to generate new secrets (sessions will end)`);
  }
  const secrets: LocalSecrets = {
    sessionSecret: randomBytes(32).toString("base64url"),
    postgresPassword: randomBytes(18).toString("base64url"),
  };
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}
