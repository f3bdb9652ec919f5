import { probeSandbox, runSandboxed } from "../../agents/tools/sandbox";
import { testSandboxSettings } from "./agent-tools";

// Started with an open directory on fd 30 and no close-on-exec flag, as a worker started by a
// careless parent would be. Runs one sandboxed command that looks for it and prints its output.
//   node --import tsx tests/support/sandbox-with-inherited-fd.ts <workspace>
const workspace = process.argv[2];
if (!workspace) throw new Error("usage: sandbox-with-inherited-fd.ts <workspace>");
const sandbox = await probeSandbox(workspace, testSandboxSettings());
if (sandbox.status !== "sandboxed") throw new Error(sandbox.reason);
const outcome = await runSandboxed(
  "ls /proc/self/fd/; ls /proc/self/fd/30/; cat /proc/self/fd/30/secret.txt",
  {
    workspace,
    timeoutSeconds: 20,
    settings: sandbox.settings,
  },
);
process.stdout.write(JSON.stringify(outcome));
