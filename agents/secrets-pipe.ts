import type { ChildProcess } from "node:child_process";
import { createReadStream } from "node:fs";
import type { Writable } from "node:stream";
import { z } from "zod";

/**
 * Secrets reach the supervisor and its workers over an inherited pipe on this fd: one JSON
 * document, then end of file. Not the environment and not argv, which any process of the same
 * user can read in /proc, and which children inherit by default.
 */
export const SECRETS_FD = 3;
const MAX_SECRETS_BYTES = 64 * 1024;

export const workerSecretsSchema = z.strictObject({
  agentToken: z.string().min(16),
  anthropicApiKey: z.string().min(1).optional(),
});
export type WorkerSecrets = z.infer<typeof workerSecretsSchema>;

export const supervisorSecretsSchema = z.strictObject({
  supervisorToken: z.string().min(16),
  anthropicApiKey: z.string().min(1).optional(),
});
export type SupervisorSecrets = z.infer<typeof supervisorSecretsSchema>;

/** The stdio option that opens the pipe: `spawn(..., { stdio: secretsStdio("inherit") })`. */
export function secretsStdio(
  output: "inherit" | "pipe",
): ["ignore", typeof output, typeof output, "pipe"] {
  return ["ignore", output, output, "pipe"];
}

/** Writes the secrets to a child started with `secretsStdio`, and closes the pipe. */
export function sendSecrets(child: ChildProcess, secrets: WorkerSecrets | SupervisorSecrets): void {
  const pipe = child.stdio[SECRETS_FD] as Writable | null | undefined;
  if (!pipe) throw new Error(`the child has no secrets pipe on fd ${SECRETS_FD}`);
  // A child that died at once closes its end; its exit is reported on its own.
  pipe.on("error", () => undefined);
  pipe.end(JSON.stringify(secrets));
}

/** Reads this process's secrets from the pipe its parent opened; they then live in memory only. */
export async function readSecrets<T>(schema: z.ZodType<T>, who: string): Promise<T> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of createReadStream("", { fd: SECRETS_FD })) {
      size += (chunk as Buffer).length;
      if (size > MAX_SECRETS_BYTES) throw new Error("more than 64 KiB");
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw new Error(
      `${who}: no secrets on fd ${SECRETS_FD} (${(error as Error).message}); it is started by ${who === "worker" ? "the supervisor" : "npm start"}, which hands them over a pipe`,
    );
  }
  const parsed = schema.safeParse(
    (() => {
      try {
        return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
      } catch {
        return null;
      }
    })(),
  );
  if (!parsed.success) throw new Error(`${who}: the secrets on fd ${SECRETS_FD} are not valid`);
  return parsed.data;
}
