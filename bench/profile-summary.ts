import { readCpuProfile, summariseProfile, type Share } from "./profile";

// Summarises a V8 .cpuprofile (from `BENCH_CPU_PROF=<dir> npm run bench`): where the server's CPU
// went, by package and by function, self time and inclusive time.
//   node --import tsx bench/profile-summary.ts <file.cpuprofile> [top]

const file = process.argv[2];
const top = Number(process.argv[3] ?? 25);
if (!file) {
  console.error("usage: node --import tsx bench/profile-summary.ts <file.cpuprofile> [top]");
  process.exit(2);
}
const summary = summariseProfile(readCpuProfile(file), { top });

const print = (title: string, shares: readonly Share[]) => {
  console.log(`\n${title}`);
  for (const { name, ms, percent } of shares) {
    console.log(`${percent.toFixed(1).padStart(5)}%  ${String(ms).padStart(7)} ms  ${name}`);
  }
};
console.log(`${file}: ${(summary.sampledMs / 1000).toFixed(1)} s sampled`);
print("self time by package", summary.selfByPackage);
print("self time by function", summary.selfByFunction);
print("inclusive time by function", summary.inclusiveByFunction);
