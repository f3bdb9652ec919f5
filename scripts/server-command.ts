/**
 * Node's arguments for the server process, up to and including `server.ts`, wherever it is started:
 * `npm start`, e2e and the bench spawn it with these, and package.json's `serve` and `dev`
 * scripts, which cannot import them, are held to them by scripts/server-command.test.ts.
 *
 * A semi-space of up to 32 MiB (decision 056): under a fan-out to 50 consoles with 1,000 open
 * long-polls, V8's own sizing collected the young generation 125 times in 15 s, 266 ms of pauses
 * of up to 17 ms, and promoted enough to start two full collections; with this, 18 times, 80 ms.
 */
export const SERVER_NODE_ARGS: readonly string[] = [
  "--max-semi-space-size=32",
  "--import",
  "tsx",
  "server.ts",
];
