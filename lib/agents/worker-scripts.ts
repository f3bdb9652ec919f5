import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { workerConfigSchema } from "../shared/agents/schema";

export type WorkerScriptOption = { name: string; description: string | null };

// The supervisor's workers load scripts from agents/scripts by name; the server and the
// supervisor run from the same checkout, so the list is read from there, by file name only.
const SCRIPTS_DIRECTORY = path.join(process.cwd(), "agents", "scripts");

const scriptNameSchema = workerConfigSchema.shape.script.unwrap();
const scriptHeaderSchema = z.object({ description: z.string().optional() }).catch({});

/** Scripts the test suites drive workers with; a Lead has no use for them. */
const TEST_SCRIPT_PREFIX = "test-";

/**
 * The scripted model's scripts a Lead may pick in the spawn form; empty when the folder is
 * missing. A test script can still be named through the API.
 */
export async function listWorkerScripts(): Promise<WorkerScriptOption[]> {
  const files = await readdir(SCRIPTS_DIRECTORY).catch(() => [] as string[]);
  const names = files
    .filter((file) => file.endsWith(".json"))
    .map((file) => file.slice(0, -".json".length))
    .filter((name) => scriptNameSchema.safeParse(name).success)
    .filter((name) => !name.startsWith(TEST_SCRIPT_PREFIX))
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const text = await readFile(path.join(SCRIPTS_DIRECTORY, `${name}.json`), "utf8");
      let header: z.infer<typeof scriptHeaderSchema> = {};
      try {
        header = scriptHeaderSchema.parse(JSON.parse(text));
      } catch {
        // A script the worker cannot parse still shows by name; the worker reports the error.
      }
      return { name, description: header.description ?? null };
    }),
  );
}
