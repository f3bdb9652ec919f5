import { fileURLToPath } from "node:url";
import { Command, InvalidArgumentError, Option } from "commander";
import { ZodError } from "zod";
import { askLead, ASK_EXIT } from "./ask";
import { checkConnection } from "./claude-code-check";
import { runHook } from "./claude-code-hook";
import {
  DEFAULT_TIMEOUT_SECONDS,
  findHooksSwitchedOff,
  InstallError,
  installClaudeCode,
} from "./claude-code-install";
import { serverUrlSchema } from "./config";
import { envToken } from "./env";
import { EXIT, UsageError, waitForApproval } from "./wait-for-approval";

/** The launcher next to the bundle (bin/handshake), which settings.json calls by absolute path. */
const CLI_PATH = fileURLToPath(new URL("../handshake", import.meta.url));

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 5 || seconds > 86_400) {
    throw new InvalidArgumentError("a whole number of seconds from 5 to 86400");
  }
  return seconds;
}

/** A question's default lifetime on the server, too (lib/protocol/question.ts). */
const ASK_TIMEOUT_SECONDS = 600;

const timeoutOption = () =>
  new Option("--timeout <seconds>", "how long to wait for the Lead's decision")
    .argParser(parseSeconds)
    .default(DEFAULT_TIMEOUT_SECONDS);

/** Both asking commands act as an agent: HANDSHAKE_AGENT_TOKEN's, or a connect token's session. */
const sessionKeyOption = () =>
  new Option(
    "--agent <key>",
    "without HANDSHAKE_AGENT_TOKEN: ask as the connect token's session keyed KEY (the same KEY is the same session), judged as Claude Code's are; the console names its agent after the current directory (e.g. proj-3f2a), not KEY",
  );

async function resolveToken(option: string | undefined): Promise<string> {
  const token = option === "-" ? (await readStdin()).trim() : (option ?? envToken());
  if (!token || /\s/.test(token)) {
    throw new InstallError(
      "give a connect token: --token TOKEN, --token - (stdin) or HANDSHAKE_TOKEN",
    );
  }
  return token;
}

function buildProgram(): Command {
  const program = new Command("handshake")
    .description("Handshake from the command line: connect Claude Code, wait for approvals")
    .showHelpAfterError();
  const claudeCode = program.command("claude-code").description("connect Claude Code sessions");

  claudeCode
    .command("install")
    .description("write the hooks into DIR/.claude/settings.json; works with the server down")
    .requiredOption("--url <url>", "the Handshake server, e.g. http://127.0.0.1:3000")
    .option("--token <token>", "a connect token; '-' reads it from stdin (or HANDSHAKE_TOKEN)")
    .option("--dir <dir>", "the project directory", process.cwd())
    .addOption(timeoutOption())
    .action(async (options: { url: string; token?: string; dir: string; timeout: number }) => {
      const url = serverUrlSchema.safeParse(options.url);
      if (!url.success) throw new InstallError(`--url: ${url.error.issues[0]?.message}`);
      const result = await installClaudeCode({
        connection: { url: url.data, token: await resolveToken(options.token) },
        dir: options.dir,
        cliPath: CLI_PATH,
        timeoutSeconds: options.timeout,
      });
      console.log(
        `${result.isChanged ? "hooks written to" : "hooks already in"} ${result.settingsFile}`,
      );
      console.log(`connection stored in ${result.configFile} (mode 0600)`);
      console.log("run `handshake claude-code check` to test the connection");
    });

  claudeCode
    .command("check")
    .description("test the connection and the token, and that nothing switches the hooks off")
    .option("--dir <dir>", "the project directory", process.cwd())
    .action(async (options: { dir: string }) => {
      const result = await checkConnection();
      const switchedOff = await findHooksSwitchedOff(options.dir);
      for (const line of result.lines) console.log(line);
      if (switchedOff) console.log(`hooks: ${switchedOff}`);
      process.exitCode = result.isOk && !switchedOff ? 0 : 1;
    });

  claudeCode
    .command("hook")
    .description("run by Claude Code: the hook JSON on stdin, its decision on stdout")
    .addOption(timeoutOption())
    .action(async (options: { timeout: number }) => {
      try {
        const result = await runHook(await readStdin(), options.timeout);
        if (result.stdout) process.stdout.write(result.stdout + "\n");
        process.exitCode = result.exitCode;
      } catch (error) {
        // Fails closed: exit 2 is a block to Claude Code, whatever went wrong.
        process.stderr.write(`Handshake hook failed, so the call is blocked: ${describe(error)}\n`);
        process.exitCode = 2;
      }
    });

  program
    .command("wait-for-approval")
    .description(
      "ask the Lead and wait: exit 0 approved, 1 rejected, 2 timed out, unreachable or misused",
    )
    .option("--tool <name>", "the tool the script is about to run")
    .option("--args <json>", "its arguments, a JSON object", "{}")
    .option("--plan <file>", "a plan for the Lead to approve instead of a tool call")
    .addOption(sessionKeyOption())
    .option("--url <url>", "the Handshake server (or HANDSHAKE_URL, or the installed one)")
    .addOption(timeoutOption())
    .action(
      async (options: {
        tool?: string;
        args?: string;
        plan?: string;
        agent?: string;
        url?: string;
        timeout: number;
      }) => {
        try {
          const result = await waitForApproval({ ...options, timeoutSeconds: options.timeout });
          console.log(result.message);
          process.exitCode = result.exitCode;
        } catch (error) {
          console.error(describe(error));
          process.exitCode = EXIT.unanswered;
        }
      },
    );

  program
    .command("ask")
    .description(
      "ask the Lead a question and wait: the answer on stdout and exit 0; exit 2 when unanswered, timed out or unreachable; 1 on misuse",
    )
    .argument("<question>", "the question, e.g. 'staging or production?'")
    .option(
      "--option <id[=label]>",
      "an answer the Lead can pick, repeatable: an id ([A-Za-z0-9_.-]) and an optional label, e.g. --option prod=Production",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option("--allow-text", "the Lead may answer in words (printed as 'id: text' with an option)")
    .option("--default <answer>", "an option id (or, with --allow-text, a text) a timeout answers")
    .addOption(sessionKeyOption())
    .option("--url <url>", "the Handshake server (or HANDSHAKE_URL, or the installed one)")
    .addOption(
      new Option("--timeout <seconds>", "how long the Lead has to answer")
        .argParser(parseSeconds)
        .default(ASK_TIMEOUT_SECONDS),
    )
    .action(
      async (
        question: string,
        options: {
          option: string[];
          allowText?: boolean;
          default?: string;
          agent?: string;
          url?: string;
          timeout: number;
        },
      ) => {
        // Misuse (a default that is no option, a bad option id) fails here, before any request.
        const result = await askLead({
          ...options,
          question,
          options: options.option,
          timeoutSeconds: options.timeout,
        }).catch((error: unknown) => {
          if (error instanceof UsageError) throw error;
          return { exitCode: ASK_EXIT.unanswered, stdout: null, stderr: describe(error) };
        });
        if (result.stdout !== null) console.log(result.stdout);
        if (result.stderr !== null) console.error(result.stderr);
        process.exitCode = result.exitCode;
      },
    );

  return program;
}

function describe(error: unknown): string {
  if (error instanceof ZodError) return error.issues.map((issue) => issue.message).join("; ");
  return error instanceof Error ? error.message : String(error);
}

try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  // Whatever a command did not answer itself (a broken config file, a settings.json that is a
  // folder) is said in one line, exit 1: thrown on, it reached the launcher, which took it for a
  // bundle that would not load and said to rebuild it.
  console.error(
    error instanceof InstallError || error instanceof UsageError || error instanceof ZodError
      ? describe(error)
      : `handshake: ${describe(error)}`,
  );
  process.exitCode = 1;
}
