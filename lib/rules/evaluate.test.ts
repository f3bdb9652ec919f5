import { beforeAll, describe, expect, it } from "vitest";
import { loadShellParser } from "../shared/protocol/shell-command";
import { classifyToolCall } from "../shared/protocol/tool-risk";
import { prepareAgentCall } from "./evaluate";

const worker = {
  name: "builder",
  role: "bench",
  ownerTokenId: null,
  connector: null,
  connectorKey: null,
};

beforeAll(() => loadShellParser());

describe("prepareAgentCall", () => {
  it("matches rules on the parse the gate judged the command by, not a second one", async () => {
    const args = { command: "git push origin main" };
    const judged = await classifyToolCall("bash", args);
    expect(judged.analysis?.source).toBe(args.command);
    const prepared = prepareAgentCall(worker, "bash", args, undefined, judged);
    expect(prepared.analysis).toBe(judged.analysis);
  });

  it("parses the command itself when the judged parse is of another command, or there is none", async () => {
    const judged = await classifyToolCall("bash", { command: "ls" });
    const args = { command: "git push origin main" };
    for (const prepared of [
      prepareAgentCall(worker, "bash", args, undefined, judged),
      prepareAgentCall(worker, "bash", args, undefined),
    ]) {
      expect(prepared.analysis).not.toBe(judged.analysis);
      expect(prepared.analysis?.source).toBe(args.command);
      expect(prepared.analysis?.commands.map((command) => command.name?.value)).toEqual(["git"]);
    }
  });
});
