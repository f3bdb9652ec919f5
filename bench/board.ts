import { chromium, type BrowserContext } from "@playwright/test";
import pg from "pg";
import { env } from "../lib/env";
import { signedInBrowserContext, type BenchSession } from "./clients";
import { median, sleep } from "./stats";

/**
 * Issue 16: the team board in a real Chromium, driven like e2e/ drives it. Two figures for a board
 * of `agents` against the same page holding `smallAgents`: the time from navigation to the first
 * rows on screen, and the browser main thread's busy time while a burst of `burstEvents` events
 * reaches the page (CDP Performance.getMetrics TaskDuration, summed over the burst and a settle).
 */
export type BoardSample = {
  agents: number;
  firstRowsMs: number[];
  burstBusyMs: number[];
  burstScriptMs: number[];
  /** How long inserting the burst took: the events' real rate. */
  burstSpreadMs: number[];
};

/** The burst: `events` agent.updated events spread over about a second, written straight to the log. */
async function insertBurst(
  databaseUrl: string,
  names: readonly string[],
  events: number,
  round: number,
): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "bench-board" });
  await client.connect();
  const startedAt = performance.now();
  try {
    const batches = 10;
    for (let batch = 0; batch < batches; batch++) {
      const values: string[] = [];
      const params: unknown[] = [];
      for (let index = batch; index < events; index += batches) {
        const name = names[index % names.length] as string;
        // Alternating statuses, so every event changes what its row shows.
        const status = (index + round) % 2 === 0 ? "working" : "idle";
        params.push(`agent:${name}`, {
          agent: name,
          incarnation: 1,
          status,
          gate: "not_required",
          workVersion: 0,
          taskId: null,
          toolHost: null,
        });
        values.push(`('agent.updated', $${params.length - 1}, $${params.length})`);
      }
      await client.query(
        `INSERT INTO events (kind, subject, data) VALUES ${values.join(", ")}`,
        params,
      );
      await sleep(100);
    }
  } finally {
    await client.end();
  }
  return performance.now() - startedAt;
}

async function measureFirstRows(context: BrowserContext, url: string): Promise<number> {
  const page = await context.newPage();
  try {
    const startedAt = performance.now();
    await page.goto(url, { waitUntil: "commit" });
    await page.locator("tbody tr[data-agent]").first().waitFor({ state: "visible" });
    return performance.now() - startedAt;
  } finally {
    await page.close();
  }
}

async function measureBurst(
  context: BrowserContext,
  url: string,
  databaseUrl: string,
  names: readonly string[],
  events: number,
  round: number,
): Promise<{ busyMs: number; scriptMs: number; spreadMs: number }> {
  const page = await context.newPage();
  try {
    await page.goto(url);
    await page.getByRole("status", { name: "Connection: Live" }).waitFor();
    await page.locator("tbody tr[data-agent]").first().waitFor({ state: "visible" });
    const cdp = await context.newCDPSession(page);
    await cdp.send("Performance.enable");
    const metrics = async () => {
      const { metrics: list } = await cdp.send("Performance.getMetrics");
      const value = (name: string) => list.find((metric) => metric.name === name)?.value ?? 0;
      return { task: value("TaskDuration"), script: value("ScriptDuration") };
    };
    await sleep(500);
    const before = await metrics();
    const spreadMs = await insertBurst(databaseUrl, names, events, round);
    // Long enough for the last events to arrive and the batched patches to render.
    await sleep(2_000);
    const after = await metrics();
    return {
      busyMs: (after.task - before.task) * 1000,
      scriptMs: (after.script - before.script) * 1000,
      spreadMs,
    };
  } finally {
    await page.close();
  }
}

export async function measureBoard(options: {
  baseUrl: string;
  session: BenchSession;
  databaseUrl: string;
  /** The agents on the board right now, by name. */
  names: readonly string[];
  events: number;
  samples: number;
}): Promise<BoardSample> {
  const browser = await chromium.launch({
    executablePath: env.CHROMIUM_PATH,
    args: ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"],
  });
  try {
    const context = await signedInBrowserContext(browser, options.baseUrl, options.session);
    const url = `${options.baseUrl}/team?view=table`;
    // One load to warm the server's and the browser's caches, not counted.
    await measureFirstRows(context, url);
    const sample: BoardSample = {
      agents: options.names.length,
      firstRowsMs: [],
      burstBusyMs: [],
      burstScriptMs: [],
      burstSpreadMs: [],
    };
    for (let round = 0; round < options.samples; round++) {
      sample.firstRowsMs.push(await measureFirstRows(context, url));
      const burst = await measureBurst(
        context,
        url,
        options.databaseUrl,
        options.names,
        options.events,
        round,
      );
      sample.burstBusyMs.push(burst.busyMs);
      sample.burstScriptMs.push(burst.scriptMs);
      sample.burstSpreadMs.push(burst.spreadMs);
    }
    return sample;
  } finally {
    await browser.close();
  }
}

export function summarizeBoard(sample: BoardSample) {
  return {
    agents: sample.agents,
    firstRowsMs: median(sample.firstRowsMs),
    burstBusyMs: median(sample.burstBusyMs),
    burstScriptMs: median(sample.burstScriptMs),
    burstSpreadMs: median(sample.burstSpreadMs),
  };
}
