/** Whether a process of this pid still stands (a zombie counts until its parent reaps it). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether `condition` held within `withinMs`, asked every 50 ms. */
export async function becomes(condition: () => boolean, withinMs: number): Promise<boolean> {
  for (const startedAt = Date.now(); Date.now() - startedAt < withinMs;) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}
