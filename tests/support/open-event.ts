import { getDb } from "../../lib/db";

/** An event whose transaction stays open until `end` commits or rolls it back. */
export type OpenEvent = { id: number; end(outcome: "commit" | "rollback"): Promise<void> };

/**
 * Writes an event in a transaction left open: its id is taken, and it commits (or never does)
 * when the test says, after events with higher ids have committed. `end` may be called again.
 */
export async function openEvent(subject: string): Promise<OpenEvent> {
  let reportId!: (id: number) => void;
  const written = new Promise<number>((resolve) => (reportId = resolve));
  let decide!: (outcome: "commit" | "rollback") => void;
  const decided = new Promise<"commit" | "rollback">((resolve) => (decide = resolve));
  const transaction = getDb()
    .$transaction(
      async (tx) => {
        const row = await tx.event.create({
          data: { kind: "test.in-flight", subject, data: {} },
          select: { id: true },
        });
        reportId(Number(row.id));
        if ((await decided) === "rollback") throw new Error("rolled back on purpose");
      },
      { timeout: 20_000 },
    )
    .catch((error: Error) => {
      if (error.message !== "rolled back on purpose") throw error;
    });
  return {
    id: await written,
    end: async (outcome) => {
      decide(outcome);
      await transaction;
    },
  };
}
