import { readFileSync } from "node:fs";

// Summarises a V8 .cpuprofile (from `BENCH_CPU_PROF=<dir> npm run bench`): where the server's CPU
// went, by package and by function, self time and inclusive time.
//   node --import tsx bench/profile-summary.ts <file.cpuprofile> [top]

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

const file = process.argv[2];
const top = Number(process.argv[3] ?? 25);
if (!file) {
  console.error("usage: node --import tsx bench/profile-summary.ts <file.cpuprofile> [top]");
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes)
  for (const child of node.children ?? []) parent.set(child, node.id);

const selfUs = new Map<number, number>();
profile.samples.forEach((id, index) => {
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
});
const totalUs = [...selfUs.values()].reduce((sum, value) => sum + value, 0);

function packageOf(url: string): string {
  if (!url) return "(native/vm)";
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) {
    const rest = url.slice(modules + "node_modules/".length).split("/");
    return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith("node:")) return "node:internal";
  const project = url.indexOf("/work/");
  return project >= 0 ? url.slice(url.indexOf("/", project + 6) + 1) : url;
}
const label = (node: ProfileNode) =>
  `${node.callFrame.functionName || "(anonymous)"} ${packageOf(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;

const selfByPackage = new Map<string, number>();
const selfByFunction = new Map<string, number>();
const inclusiveByFunction = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  if (!node) continue;
  const pkg = packageOf(node.callFrame.url);
  selfByPackage.set(pkg, (selfByPackage.get(pkg) ?? 0) + us);
  selfByFunction.set(label(node), (selfByFunction.get(label(node)) ?? 0) + us);
  // Inclusive: charge every distinct frame on the stack once.
  const seen = new Set<string>();
  for (let cursor: number | undefined = id; cursor !== undefined; cursor = parent.get(cursor)) {
    const frame = byId.get(cursor);
    if (!frame) break;
    const name = label(frame);
    if (seen.has(name)) continue;
    seen.add(name);
    inclusiveByFunction.set(name, (inclusiveByFunction.get(name) ?? 0) + us);
  }
}

const print = (title: string, entries: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [name, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `${((us / totalUs) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}`,
    );
  }
};
console.log(`${file}: ${(totalUs / 1e6).toFixed(1)} s sampled`);
print("self time by package", selfByPackage);
print("self time by function", selfByFunction);
print("inclusive time by function", inclusiveByFunction);
