import { createHash } from "node:crypto";
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { configDir } from "./env";

// Every call appends its route to the URL, so a query or a fragment would swallow the route, and
// credentials in it would be printed in the reasons the model reads.
export const serverUrlSchema = z
  .url({ protocol: /^https?$/, error: "the URL must be http:// or https://" })
  .refine((url) => {
    const { search, hash, username, password } = new URL(url);
    return search === "" && hash === "" && username === "" && password === "";
  }, "the URL names the server only: no ?query, #fragment or user:password@")
  .transform((url) => url.replace(/\/+$/, ""));

const connectionSchema = z.object({ url: serverUrlSchema, token: z.string().min(1) });
export type Connection = z.infer<typeof connectionSchema>;

const cachedAgentSchema = z.object({ name: z.string(), token: z.string().min(1) });
export type CachedAgent = z.infer<typeof cachedAgentSchema>;

/**
 * Credentials live outside every project, readable by the user only. Claude Code's settings.json
 * names the command, never the URL or a token, so a committed settings file leaks nothing.
 */
const CONFIG_FILE = "config.json";

/** Written to a temporary name and renamed, so a reader never sees half a file; 0600 from birth. */
async function writePrivateJson(file: string, value: unknown): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify(value, null, 2) + "\n", { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, file);
}

/** A file's JSON, undefined when there is no file; what is wrong with it names the file. */
async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not JSON (${(error as Error).message})`);
  }
}

export async function saveConnection(connection: Connection): Promise<string> {
  const file = path.join(configDir(), CONFIG_FILE);
  await writePrivateJson(file, connection);
  await chmod(configDir(), 0o700);
  return file;
}

/** The stored URL and `connect` token; null when `install` never ran (or the file is not ours). */
export async function loadConnection(): Promise<Connection | null> {
  const parsed = connectionSchema.safeParse(await readJson(path.join(configDir(), CONFIG_FILE)));
  return parsed.success ? parsed.data : null;
}

/** One file per server, token and session: a hook process must not reuse another server's agent. */
function agentFile(connection: Connection, key: string): string {
  const digest = createHash("sha256")
    .update(`${connection.url}\n${connection.token}\n${key}`)
    .digest("hex")
    .slice(0, 32);
  return path.join(configDir(), "agents", `${digest}.json`);
}

export async function loadCachedAgent(
  connection: Connection,
  key: string,
): Promise<CachedAgent | null> {
  // A cache: a file it cannot use is as good as none, and the agent's token is obtained again.
  const cached = await readJson(agentFile(connection, key)).catch(() => undefined);
  const parsed = cachedAgentSchema.safeParse(cached);
  return parsed.success ? parsed.data : null;
}

export async function saveCachedAgent(
  connection: Connection,
  key: string,
  agent: CachedAgent,
): Promise<void> {
  await writePrivateJson(agentFile(connection, key), agent);
}

export async function forgetCachedAgent(connection: Connection, key: string): Promise<void> {
  await rm(agentFile(connection, key), { force: true });
}
