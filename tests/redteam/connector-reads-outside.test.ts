import { describe, expect, it } from "vitest";
import { classifyConnectorCall } from "../../lib/protocol/connector-gate";

/**
 * Red team: a connected Claude Code session's tools run unsandboxed on the user's machine, so a
 * call the connector gate lets through at once must read nothing outside the session's directory.
 * Each of these ran at once (`read_only`) and read a secret elsewhere on the machine.
 */
const CWD = "/home/ada/api";

async function classOf(tool: string, args: Record<string, unknown>, cwd: string | null = CWD) {
  return (await classifyConnectorCall(tool, args, cwd ?? undefined)).class;
}

describe("connected session reads outside its directory (red team)", () => {
  it.each<[string, Record<string, unknown>]>([
    ["Read", { file_path: "/home/ada/.ssh/id_rsa" }],
    ["Read", { file_path: "/home/ada/api/../.aws/credentials" }],
    ["Read", { file_path: "~/.ssh/id_rsa" }],
    ["Read", { file_path: "../.ssh/id_rsa" }],
    ["Read", { file_path: "/proc/self/environ" }],
    ["Read", { file_path: "/tmp/krb5cc_1000" }],
    ["NotebookRead", { notebook_path: "/home/bob/secret.ipynb" }],
    ["LS", { path: "/" }],
    ["LS", { path: "/home/ada/.ssh" }],
    ["Glob", { pattern: "/home/ada/.ssh/*" }],
    ["Glob", { pattern: "../../**/id_rsa" }],
    ["Glob", { pattern: "{..,src}/**/.env" }],
    ["Glob", { pattern: "*", path: "/etc" }],
    ["Grep", { pattern: "PRIVATE KEY", path: "/home/ada" }],
    ["Grep", { pattern: "KEY", path: "../" }],
    ["Read", { file_path: 42 }],
    ["Read", { file_path: "/dev/fd/3/../.ssh/id_rsa" }],
    // `file -m` prints each line of the magic file it cannot parse: the value follows `-b`.
    ["Bash", { command: "file -bm/home/ada/.aws/credentials /dev/null" }],
    ["Bash", { command: "file -bm../.aws/credentials /dev/null" }],
  ])("%s %j needs the Lead", async (tool, args) => {
    expect(await classOf(tool, args)).toBe("needs_approval");
  });

  it.each([
    // Round eleven: each read as relative, and a Glob that expands braces lists /etc.
    ["an absolute alternative", "{/etc/*,x}"],
    ["a home directory's", "{/home/ada/.ssh/*,src/*.ts}"],
    ["a nested one", "{{/etc,x},y}/*"],
    ["a tilde", "{~,x}/.ssh/*"],
    // More alternatives than the server judges one by one, or braces left past its budget.
    ["512 alternatives", "{a,b}".repeat(9)],
    ["braces 2,000 deep", `${"{".repeat(2_000)}x${"}".repeat(2_000)}{/etc,x}`],
  ])("a Glob pattern with %s needs the Lead", async (_what, pattern) => {
    expect(await classOf("Glob", { pattern })).toBe("needs_approval");
  });

  it("still runs reads inside the directory at once", async () => {
    expect(await classOf("Glob", { pattern: "**/*.{ts,tsx}" })).toBe("read_only");
    expect(await classOf("Glob", { pattern: "{src,lib}/**/*.{js,json}" })).toBe("read_only");
    expect(await classOf("Read", { file_path: "/home/ada/api/src/a.ts" })).toBe("read_only");
    expect(await classOf("Read", { file_path: "/home/ada/api/.env.example" })).toBe("read_only");
    expect(await classOf("Glob", { pattern: "**/*.ts" })).toBe("read_only");
    expect(await classOf("Glob", { pattern: "src/**/*.ts", path: "/home/ada/api" })).toBe(
      "read_only",
    );
    expect(await classOf("Grep", { pattern: "TODO", path: "lib", glob: "*.ts" })).toBe("read_only");
    expect(await classOf("Grep", { pattern: "../etc", output_mode: "content" })).toBe("read_only");
    expect(await classOf("LS", { path: "/home/ada/api/lib" })).toBe("read_only");
    expect(await classOf("NotebookRead", { notebook_path: "/home/ada/api/n.ipynb" })).toBe(
      "read_only",
    );
  });

  it("the host's shared /tmp is outside the directory (a Kerberos ticket cache lives there)", async () => {
    expect(await classOf("Bash", { command: "cat /tmp/krb5cc_1000" })).toBe("needs_approval");
    expect(await classOf("Bash", { command: "sort -m /tmp/x" })).toBe("needs_approval");
    expect(await classOf("Bash", { command: "cat x 2>/dev/null" })).toBe("read_only");
  });

  it("a directory that bounds nothing (`/`, `..` up to it, none, a drive) makes no Bash read-only", async () => {
    for (const cwd of ["/", "/home/ada/api/../../..", "//", null, "C:\\Users\\ada\\api"]) {
      expect(await classOf("Bash", { command: "cat etc/shadow" }, cwd), String(cwd)).toBe(
        "needs_approval",
      );
      expect(await classOf("Read", { file_path: "etc/shadow" }, cwd), String(cwd)).toBe(
        "needs_approval",
      );
    }
  });

  it("jq prints the user's environment (API keys) with env or $ENV", async () => {
    for (const command of [
      "jq -n env",
      "jq -n '$ENV.ANTHROPIC_API_KEY'",
      // jq 1.6 reads `$ ENV` (a space, or a line break, after the $) as $ENV.
      "jq -n '$ ENV'",
      "jq -n '$\nENV'",
      'jq -n "env | keys"',
      "jq -n -f prog.jq",
      "jq -n --from-file prog.jq",
    ]) {
      expect(await classOf("Bash", { command }), command).toBe("needs_approval");
    }
    expect(await classOf("Bash", { command: "jq '.env' package.json" })).toBe("read_only");
    expect(await classOf("Bash", { command: "jq '.ENV' package.json" })).toBe("read_only");
    expect(await classOf("Bash", { command: "jq '.import' package.json" })).toBe("read_only");
    expect(await classOf("Bash", { command: "jq .scripts package.json" })).toBe("read_only");
  });

  it("jq imports JSON from its search path (~/.jq), and `..` climbs out of it", async () => {
    // jq -n 'import "../.docker/config" as $c; $c' prints ~/.docker/config.json (registry auth).
    for (const command of [
      "jq -n 'import \"../.docker/config\" as $c; $c'",
      "jq -n 'include \"../x\"; 1'",
      "jq -n 'import \"x\" as x; 1'",
    ]) {
      expect(await classOf("Bash", { command }), command).toBe("needs_approval");
    }
  });

  it("grep takes its pattern from --file, so its first operand is a path (grep -v --file=/dev/null prints it all)", async () => {
    for (const command of [
      "grep -v --file=/dev/null /home/ada/.ssh/id_rsa",
      "grep --file /dev/null -v ~/.aws/credentials",
      "rg --files /home/ada/.ssh",
      "rg --file=/dev/null -v /etc/shadow",
    ]) {
      expect(await classOf("Bash", { command }), command).toBe("needs_approval");
    }
    expect(await classOf("Bash", { command: "grep -rn /home/ada src" })).toBe("read_only");
  });

  it("a glob like .? or .[.] or .* matches `..` in bash before 5.2 (and with globskipdots off)", async () => {
    for (const command of [
      "cat .?/.ssh/id_rsa",
      "cat .[.]/.ssh/id_rsa",
      "cat .*/.ssh/id_rsa",
      "cat /home/ada/api/.?/.ssh/id_rsa",
      "cd .? && cat .ssh/id_rsa",
      "cat src/.?/.?/../x",
    ]) {
      expect(await classOf("Bash", { command }), command).toBe("needs_approval");
    }
    expect(await classOf("Bash", { command: "cat src/.*" })).toBe("read_only");
    expect(await classOf("Bash", { command: "cat '.?/x'" })).toBe("read_only");
  });

  it("commands that take the names to read from a file the check cannot see", async () => {
    for (const command of [
      "wc --files0-from=names",
      "find . -files0-from names",
      "file -f names",
      "file --files-from names",
      "sha256sum -c sums",
      "md5sum --check sums",
    ]) {
      expect(await classOf("Bash", { command }), command).toBe("needs_approval");
    }
  });
});
