import { spawnSync } from "node:child_process";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { analyzeShellCommand, loadShellParser } from "../protocol/shell-command";
import { matchesPattern, prepareCall, type CallLocation } from "./match";
import { parseRulePattern, patternForCall } from "./pattern";
import { judgeByRules, type JudgedRule, type RuleSubject } from "./verdict";

beforeAll(async () => {
  await loadShellParser();
});

const WORKER: CallLocation = { root: null, cwd: null };
const SESSION: CallLocation = { root: "/home/ana/app", cwd: "/home/ana/app" };
const SUBDIR: CallLocation = { root: "/home/ana/app", cwd: "/home/ana/app/web" };
const BRO: RuleSubject = { agent: "brock", role: "builder", tokenId: null, projectCwd: null };
const NOW = new Date("2026-11-30T12:00:00Z");

let nextId = 0;
function rule(
  pattern: string,
  effect: JudgedRule["effect"],
  extra: Partial<JudgedRule> = {},
): JudgedRule {
  nextId += 1;
  return {
    id: `rule-${String(nextId).padStart(3, "0")}`,
    pattern,
    effect,
    scope: { kind: "everyone" },
    mode: "enforce",
    requiredApprovals: 1,
    expiresAt: null,
    createdAt: new Date(NOW.getTime() - 60_000 + nextId),
    ...extra,
  };
}

function judge(
  rules: JudgedRule[],
  tool: string,
  args: Record<string, unknown>,
  location = WORKER,
  subject = BRO,
) {
  const call = prepareCall(tool, args, location, analyzeShellCommand);
  return judgeByRules(rules, call, subject, NOW);
}

/** One pattern and effect, one call: which effect decides (null: no rule applies). */
type Row = [
  pattern: string,
  effect: JudgedRule["effect"],
  tool: string,
  args: Record<string, unknown>,
  expected: JudgedRule["effect"] | null,
  location?: CallLocation,
];

const bash = (command: string) => ({ command });
const file = (value: string) => ({ path: value });
const claudeFile = (value: string) => ({ file_path: value });

const TABLE: readonly Row[] = [
  // Bash allow: every simple command must match, nothing left over.
  ["Bash(npm test*)", "allow", "Bash", bash("npm test"), "allow", SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("npm test -- --watch=false"), "allow", SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("npm test; curl x | sh"), null, SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("npm test && rm -rf /"), null, SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("npm test && npm test"), "allow", SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("npm test $(curl x)"), null, SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("npm test `id`"), null, SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("npm test <(curl x)"), null, SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("npm test > ~/.bashrc"), null, SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("npm test 2>&1"), "allow", SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("npm test >/dev/null"), "allow", SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("NODE_OPTIONS=--require=x npm test"), null, SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("npm test &"), null, SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("npm $T"), null, SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("f() { rm -rf /; }; npm test"), null, SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("npm test\\\n; rm x"), null, SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash('"npm" "test"'), "allow", SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("NPM test"), null, SESSION],
  ["Bash(npm test*)", "allow", "Bash", bash("npm test\u202e"), null, SESSION],
  ["Bash(npm test*)", "allow", "bash", bash("npm test"), null],
  // Code held in a value runs where no word shows it (tests/redteam/prompt-expansion-reads.test.ts).
  ["bash(npm test)", "allow", "bash", bash("for i in ${x@P}; do npm test; done"), null],
  ["bash(npm test)", "allow", "bash", bash("case ${a[y]} in *) npm test;; esac"), null],
  ["bash(npm test*)", "allow", "bash", bash("npm test '${x@P}'"), null],
  // Words after a redirection are the command's: `npm 2>&1 test` is `npm test`.
  ["bash(npm test)", "allow", "bash", bash("npm 2>/dev/null test"), "allow"],
  ["bash(npm test)", "allow", "bash", bash("npm 2>/dev/null test; rm -rf x"), null],
  ["bash(git status*)", "allow", "bash", bash("git status --short"), "allow"],
  ["bash(git status)", "allow", "bash", bash("git status --short"), null],
  ["bash(npm run test:*)", "allow", "bash", bash("npm run test --silent"), "allow"],
  ["bash(npm run test:*)", "allow", "bash", bash("npm run testx"), null],
  ["bash(ls *)", "allow", "bash", bash("ls *.txt"), null],
  ["bash(npm test*)", "allow", "bash", { command: 42 }, null],
  // A comment is text no pattern says, and where the parse and the shell split words otherwise
  // it hides the rest of the line (`\ #` is a word to bash): tests/redteam/rule-loopholes.test.ts.
  ["Bash(ls:*)", "allow", "Bash", bash("ls -la \\ # list; cat ~/.ssh/id_rsa"), null, SESSION],
  ["Bash(ls:*)", "allow", "Bash", bash("ls -la # list"), null, SESSION],
  ["Bash(ls:*)", "allow", "Bash", bash("ls -la"), "allow", SESSION],
  // `{PATH}>/dev/null` sets PATH before zsh looks `ls` up: it ran `./12/ls`.
  ["Bash(ls:*)", "allow", "Bash", bash("ls {PATH}>/dev/null"), null, SESSION],
  ["Bash(ls:*)", "allow", "Bash", bash("ls '{PATH}'>/dev/null"), "allow", SESSION],
  // Bash deny and ask: any simple command that might match.
  ["Bash(rm *)", "deny", "Bash", bash("ls && rm -rf build"), "deny", SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("echo $(rm -rf build)"), "deny", SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("RM -rf build"), "deny", SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("sudo rm -rf build"), "deny", SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("sh -c 'rm -rf build'"), "deny", SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("$CMD -rf build"), "deny", SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("ls -la"), null, SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("echo ${x@P}"), "deny", SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("echo ${!x}"), "deny", SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("echo $((x))"), "deny", SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("echo ${a[0]} $((1 + 2))"), null, SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("ls 2>/dev/null && rm 2>/dev/null -rf x"), "deny", SESSION],
  // A program named by its path, or run by find or a wrapper the classifier lets through, is still rm.
  ["Bash(rm *)", "deny", "Bash", bash("/bin/rm x"), "deny", SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("/usr/bin/../bin/rm x"), "deny", SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("./rm x"), "deny", SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("find . -exec rm {} +"), "deny", SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("find . -delete"), null, SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("chrt 1 rm x"), "deny", SESSION],
  ["Bash(rm *)", "deny", "Bash", bash("taskset 1 rm x"), "deny", SESSION],
  ["Bash(git push*)", "ask", "Bash", bash("/usr/bin/git push"), "ask", SESSION],
  ["Bash(git push*)", "allow", "Bash", bash("/usr/bin/git push"), null, SESSION],
  // Global options before the subcommand (`git -C . push`) do not hide it from a deny or an ask.
  ["Bash(git push*)", "deny", "Bash", bash("git -C . push --force"), "deny", SESSION],
  ["Bash(git push*)", "deny", "Bash", bash("git --git-dir=.git push"), "deny", SESSION],
  ["Bash(git push*)", "deny", "Bash", bash("/usr/bin/git -c a.b=c push"), "deny", SESSION],
  ["Bash(git push*)", "deny", "Bash", bash("git log --grep=push"), null, SESSION],
  ["Bash(npm run deploy*)", "ask", "Bash", bash("npm --prefix . run deploy"), "ask", SESSION],
  ["Bash(git push*)", "allow", "Bash", bash("git -C . push"), null, SESSION],
  ["Bash(git push*)", "ask", "Bash", bash("git $(echo push)"), "ask", SESSION],
  ["Bash(git push*)", "ask", "Bash", bash("git status"), null, SESSION],
  ["Bash(git push*)", "ask", "Bash", bash("git push origin'"), "ask", SESSION],
  // Paths: normalised against the workspace or the session's directory first.
  ["write_file(src/**)", "allow", "write_file", file("src/a/b.ts"), "allow"],
  ["write_file(src/**)", "allow", "write_file", file("./src/a.ts"), "allow"],
  ["write_file(src/**)", "allow", "write_file", file("src/../../etc/passwd"), null],
  ["write_file(src/**)", "allow", "write_file", file("src/../secrets.txt"), null],
  ["write_file(src/**)", "allow", "write_file", file("/src/a.ts"), null],
  ["write_file(src/**)", "allow", "write_file", file("SRC/a.ts"), null],
  ["write_file(src/**)", "allow", "write_file", file("src/a\0.ts"), null],
  ["write_file(src/*.ts)", "allow", "write_file", file("src/a/b.ts"), null],
  ["write_file(secrets/**)", "deny", "write_file", file("src/../secrets/key"), "deny"],
  ["write_file(secrets/**)", "deny", "write_file", file("Secrets/key"), "deny"],
  ["write_file(secrets/**)", "deny", "write_file", file("a\0b"), "deny"],
  ["write_file(secrets/**)", "deny", "edit_file", file("secrets/key"), null],
  ["Edit(**/*.md)", "allow", "Edit", claudeFile("/home/ana/app/docs/a.md"), "allow", SESSION],
  ["Edit(**/*.md)", "allow", "Edit", claudeFile("README.md"), "allow", SESSION],
  ["Edit(**/*.md)", "allow", "Edit", claudeFile("/home/ana/other/a.md"), null, SESSION],
  ["Edit(**/*.md)", "allow", "Edit", claudeFile("/home/ana/app/../other/a.md"), null, SESSION],
  ["Write(web/**)", "allow", "Write", claudeFile("page.tsx"), "allow", SUBDIR],
  ["Write(web/**)", "allow", "Write", claudeFile("../api/x.ts"), null, SUBDIR],
  ["Read(.env)", "deny", "Read", claudeFile("web/../.env"), "deny", SESSION],
  // Bare tool names and MCP globs.
  ["Write", "allow", "Write", claudeFile("/etc/anything"), "allow", SESSION],
  ["mcp__github__*", "allow", "mcp__github__create_issue", {}, "allow", SESSION],
  ["mcp__github__*", "allow", "mcp__gitlab__create_issue", {}, null, SESSION],
  ["mcp__github", "allow", "mcp__github__list_prs", {}, "allow", SESSION],
  ["mcp__github", "allow", "mcp__githubx__list_prs", {}, null, SESSION],
  ["mcp__github__create_issue", "deny", "mcp__github__create_issue", {}, "deny", SESSION],
  ["mcp__github__create_issue", "deny", "mcp__github__create_issue_x", {}, null, SESSION],
  ["WebFetch", "ask", "WebFetch", { url: "https://x" }, "ask", SESSION],
  ["webfetch", "ask", "WebFetch", { url: "https://x" }, null, SESSION],
];

describe("rule matching table", () => {
  it.each(TABLE)("%s %s · %s %j → %s", (pattern, effect, tool, args, expected, location) => {
    expect(parseRulePattern(pattern)).toMatchObject({ ok: true });
    const verdict = judge([rule(pattern, effect)], tool, args, location ?? WORKER);
    expect(verdict.rule?.effect ?? null).toBe(expected);
  });

  it("has at least 40 rows", () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(40);
  });
});

describe("precedence, expiry, shadow and scope", () => {
  it("deny beats ask beats allow, whatever the order", () => {
    const allow = rule("bash(git *)", "allow");
    const ask = rule("bash(git push*)", "ask");
    const deny = rule("bash(git push --force*)", "deny");
    const command = bash("git push --force origin main");
    expect(judge([allow, ask, deny], "bash", command).rule?.id).toBe(deny.id);
    expect(judge([deny, ask, allow], "bash", command).rule?.id).toBe(deny.id);
    expect(judge([allow, ask], "bash", command).rule?.id).toBe(ask.id);
    expect(judge([allow], "bash", command).rule?.id).toBe(allow.id);
  });

  it("among asks the two-Lead rule wins", () => {
    const one = rule("bash(git *)", "ask");
    const two = rule("bash(git push*)", "ask", { requiredApprovals: 2 });
    expect(judge([one, two], "bash", bash("git push")).rule?.id).toBe(two.id);
  });

  it("an expired rule is ignored; one expiring later still applies", () => {
    const expired = rule("bash(npm test*)", "allow", { expiresAt: new Date(NOW.getTime() - 1) });
    const atNow = rule("bash(npm test*)", "allow", { expiresAt: NOW });
    expect(judge([expired, atNow], "bash", bash("npm test")).rule).toBeNull();
    const live = rule("bash(npm test*)", "allow", { expiresAt: new Date(NOW.getTime() + 1) });
    expect(judge([expired, live], "bash", bash("npm test")).rule?.id).toBe(live.id);
  });

  it("a shadow rule never decides, but says what it would have done", () => {
    const shadowDeny = rule("bash(npm *)", "deny", { mode: "shadow" });
    const allow = rule("bash(npm test*)", "allow");
    const verdict = judge([shadowDeny, allow], "bash", bash("npm test"));
    expect(verdict.rule?.id).toBe(allow.id);
    expect(verdict.shadow?.id).toBe(shadowDeny.id);
    const alone = judge([shadowDeny], "bash", bash("npm test"));
    expect(alone).toEqual({ rule: null, shadow: shadowDeny });
  });

  it("scopes: agent, role, token, project directory, everyone", () => {
    const session: RuleSubject = {
      agent: "cc-1",
      role: "claude-code",
      tokenId: "4f1c5f3e-4a65-4f6e-9b7a-2a5c1d3e4f50",
      projectCwd: "/home/ana/app/web",
    };
    const cases: [JudgedRule["scope"], RuleSubject, boolean][] = [
      [{ kind: "agent", agent: "brock" }, BRO, true],
      [{ kind: "agent", agent: "brocky" }, BRO, false],
      [{ kind: "role", role: "builder" }, BRO, true],
      [{ kind: "role", role: "reviewer" }, BRO, false],
      [{ kind: "token", tokenId: session.tokenId ?? "" }, session, true],
      [{ kind: "token", tokenId: session.tokenId ?? "" }, BRO, false],
      [{ kind: "project", cwd: "/home/ana/app" }, session, true],
      [{ kind: "project", cwd: "/home/ana/app/" }, session, true],
      [{ kind: "project", cwd: "/home/ana/ap" }, session, false],
      [{ kind: "project", cwd: "/home/ana/app/web/src" }, session, false],
      [{ kind: "project", cwd: "/home/ana/app" }, BRO, false],
      [{ kind: "everyone" }, BRO, true],
    ];
    for (const [scope, subject, expected] of cases) {
      const verdict = judge(
        [rule("bash(npm test)", "allow", { scope })],
        "bash",
        bash("npm test"),
        WORKER,
        subject,
      );
      expect(verdict.rule !== null, JSON.stringify(scope)).toBe(expected);
    }
  });
});

describe("parseRulePattern", () => {
  it.each([
    ["", /empty/],
    ["Bash()", /empty/],
    ["Bash(npm test", /must end with '\)'/],
    ["Bash( npm test)", /single spaces/],
    ["Write(/etc/**)", /relative/],
    ["Write(~/.ssh/*)", /relative/],
    ["write_file(src/../x)", /'\.\.'/],
    ["write_file(src/**x)", /whole path segment/],
    ["WebFetch(domain:x.com)", /takes no argument pattern/],
    ["constructor(src/*)", /takes no argument pattern/],
    ["toString(x)", /takes no argument pattern/],
    ["Bas*", /only MCP tool names/],
    ["mcp__github__*(x)", /MCP tools take no argument pattern/],
    ["rm -rf", /not a tool name/],
    ["Bash(npm\u202etest)", /control or invisible/],
  ])("%j is refused: %s", (pattern, message) => {
    const parsed = parseRulePattern(pattern);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(message);
  });
});

describe("prepareCall", () => {
  it("gives a tool named after an object's built-in member no path, like any other tool", () => {
    for (const tool of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      expect(prepareCall(tool, { path: "src/a.ts" }, SESSION, analyzeShellCommand).path).toBeNull();
    }
  });
});

describe("patternForCall", () => {
  it.each([
    ["bash", { command: "npm  test" }, undefined, "bash(npm test)"],
    ["Bash", { command: "git status" }, SESSION, "Bash(git status)"],
    ["write_file", { path: "./src/a.ts" }, undefined, "write_file(src/a.ts)"],
    ["Write", { file_path: "/home/ana/app/src/a.ts" }, SESSION, "Write(src/a.ts)"],
    ["Write", { file_path: "/home/ana/app/web/package.json" }, SUBDIR, "Write(web/package.json)"],
    ["Write", { file_path: "./package.json" }, SUBDIR, "Write(web/package.json)"],
    ["mcp__github__create_issue", { title: "x" }, undefined, "mcp__github__create_issue"],
  ])("%s %j → %s", (tool, args, location, expected) => {
    const pattern = patternForCall(tool, args, location);
    expect(pattern).toBe(expected);
    expect(parseRulePattern(pattern)).toMatchObject({ ok: true });
  });
});

describe("a rule made from a card allows that call, not what a * in it would widen to", () => {
  const allows = (pattern: string, tool: string, args: Record<string, unknown>) =>
    judge([rule(pattern, "allow")], tool, args, SESSION).rule !== null;

  it("a * in the card's command is a literal star, not a wildcard across words", () => {
    const pattern = patternForCall("Bash", { command: "npm test -- --grep 'auth*'" });
    // The words, once the quotes are gone, rebuild the card's text around a smuggled option.
    const smuggled = `npm test -- --grep "'auth" --require ./evil.js "x'"`;
    expect(allows(pattern, "Bash", { command: smuggled })).toBe(false);
    expect(allows(pattern, "Bash", { command: "npm test -- --grep \"'auth*'\"" })).toBe(true);
  });

  it("a card's call in a subdirectory gives a rule for that file, not the root's namesake", () => {
    // Red team: the card's `Write(package.json)`, made relative to the call's directory, allowed
    // the project root's package.json and not the call it was made from.
    const call = claudeFile("/home/ana/app/web/package.json");
    const pattern = patternForCall("Write", call, SUBDIR);
    const allowsAt = (args: Record<string, unknown>, location: CallLocation) =>
      judge([rule(pattern, "allow")], "Write", args, location).rule !== null;
    expect(allowsAt(call, SUBDIR)).toBe(true);
    expect(allowsAt(claudeFile("/home/ana/app/package.json"), SESSION)).toBe(false);
  });

  it("a * or ? in the card's file name matches only itself", () => {
    const pattern = patternForCall("Write", { file_path: "src/a*?.ts" });
    expect(allows(pattern, "Write", claudeFile("src/abc.ts"))).toBe(false);
    expect(allows(pattern, "Write", claudeFile("src/a*?.ts"))).toBe(true);
  });

  it("\\* in a written pattern is a literal star, * still a wildcard", () => {
    expect(allows("Bash(echo a\\*b)", "Bash", bash("echo 'a*b'"))).toBe(true);
    expect(allows("Bash(echo a\\*b)", "Bash", bash("echo axb"))).toBe(false);
    expect(allows("Bash(echo a*b)", "Bash", bash("echo axb"))).toBe(true);
    expect(allows("Write(docs/\\*.md)", "Write", claudeFile("docs/a.md"))).toBe(false);
  });
});

describe("path patterns, matched by segments", () => {
  /** The RegExp a path pattern used to compile to: the oracle the segment matcher must agree with. */
  function oracle(spec: string): RegExp {
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    const segments = spec.split("/");
    const body = segments
      .map((segment, index) => {
        const isLast = index === segments.length - 1;
        if (segment === "**") return isLast ? ".*" : "(?:[^/]+/)*";
        const part = [...segment]
          .map((unit) => (unit === "*" ? "[^/]*" : unit === "?" ? "[^/]" : escape(unit)))
          .join("");
        return isLast ? part : `${part}/`;
      })
      .join("");
    return new RegExp(`^${body}$`, "s");
  }

  it("agree with the RegExp they replaced, for every spec and path of a small alphabet", () => {
    const specSegments = ["a", "b", "*", "?", "**", "a*", ""];
    const pathSegments = ["a", "b", "ab"];
    const joined = (alphabet: string[], length: number): string[] =>
      length === 0
        ? [""]
        : joined(alphabet, length - 1).flatMap((prefix) =>
            alphabet.map((segment) =>
              prefix === "" && length === 1 ? segment : `${prefix}/${segment}`,
            ),
          );
    const specs = [1, 2, 3].flatMap((length) => joined(specSegments, length));
    const paths = [0, 1, 2, 3].flatMap((length) => joined(pathSegments, length));
    const location: CallLocation = { root: "/w", cwd: "/w" };
    const disagreements: string[] = [];
    for (const spec of specs) {
      const parsed = parseRulePattern(`Edit(${spec})`);
      if (!parsed.ok) continue;
      for (const relative of paths) {
        const call = prepareCall(
          "Edit",
          { file_path: `/w/${relative}` },
          location,
          analyzeShellCommand,
        );
        if (call.path?.kind !== "inside" || call.path.relative !== relative) continue;
        const expected = oracle(spec).test(relative);
        if (matchesPattern(parsed.pattern, call, "surely") !== expected) {
          disagreements.push(JSON.stringify({ spec, relative, expected }));
        }
      }
    }
    expect(disagreements).toEqual([]);
  });
});

describe("a pattern and a call made to take the matcher's time", () => {
  it("answers many-star patterns against a long command and a deep path at once", () => {
    // In a process of its own, with a deadline: compiled to a backtracking RegExp, each match
    // below held its thread for longer than anyone waits, and with it every other call of the node.
    const modulePath = (file: string) => JSON.stringify(path.join(import.meta.dirname, file));
    const script = `
      const { matchesPattern, prepareCall } = await import(${modulePath("match.ts")});
      const { parseRulePattern } = await import(${modulePath("pattern.ts")});
      const { analyzeShellCommand, loadShellParser } = await import(${modulePath("../protocol/shell-command.ts")});
      await loadShellParser();
      const patternOf = (source) => parseRulePattern(source).pattern;
      const command = prepareCall("Bash", { command: "echo " + "a ".repeat(4000) }, { root: null, cwd: null }, analyzeShellCommand);
      const deep = prepareCall("Edit", { file_path: "a/".repeat(2000) + "b" }, { root: "/w", cwd: "/w" }, analyzeShellCommand);
      console.log(JSON.stringify([
        matchesPattern(patternOf("Bash(*a*a*a*a*a*a*b)"), command, "surely"),
        matchesPattern(patternOf("Bash(*a*a*a*a*a*a*b)"), command, "possibly"),
        matchesPattern(patternOf("Edit(**/**/**/**/**/**/c)"), deep, "possibly"),
        matchesPattern(patternOf("Edit(**/**/**/**/**/**/b)"), deep, "surely"),
      ]));
    `;
    const run = spawnSync(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { encoding: "utf8", timeout: 20_000 },
    );
    expect(run.signal, run.stderr).toBeNull();
    expect(JSON.parse(run.stdout)).toEqual([false, false, false, true]);
  }, 30_000);
});
