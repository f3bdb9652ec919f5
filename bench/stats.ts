/** Latency samples in milliseconds, summarised the same way for the raw floor and Handshake. */
export type LatencySummary = {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
};

/** Nearest-rank percentile (no interpolation): p99 of 1,000 samples is the 990th smallest. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] ?? Number.NaN;
}

export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const total = sorted.reduce((sum, value) => sum + value, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    mean: sorted.length ? total / sorted.length : Number.NaN,
    min: sorted[0] ?? Number.NaN,
    max: sorted.at(-1) ?? Number.NaN,
  };
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** Rounds for JSON output: latencies to 0.001 ms, rates to 0.1/s. */
export function round(value: number, digits = 3): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function roundSummary(summary: LatencySummary): LatencySummary {
  return Object.fromEntries(
    Object.entries(summary).map(([key, value]) => [key, key === "n" ? value : round(value)]),
  ) as LatencySummary;
}

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  return ms >= 100
    ? `${ms.toFixed(0)} ms`
    : ms >= 10
      ? `${ms.toFixed(1)} ms`
      : `${ms.toFixed(2)} ms`;
}

export function formatRate(perSecond: number): string {
  if (!Number.isFinite(perSecond)) return "—";
  return `${Math.round(perSecond).toLocaleString("en-US")}/s`;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const now = () => performance.now();
