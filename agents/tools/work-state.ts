import { z } from "zod";
import { type batchSchema, MAX_BATCH_SIZE } from "../../lib/shared/protocol/tool-args";

export type BatchPosition = z.infer<typeof batchSchema>;

const persistedSchema = z.strictObject({
  batches: z.array(
    z.strictObject({
      id: z.string().min(1).max(100),
      total: z.number().int().min(1).max(MAX_BATCH_SIZE),
      written: z.array(z.number().int().min(1).max(MAX_BATCH_SIZE)),
    }),
  ),
});
export type PersistedWorkState = z.infer<typeof persistedSchema>;

type Batch = { total: number; written: Set<number> };

/**
 * What the agent is in the middle of. A multi-file write leaves the workspace inconsistent until
 * its last file lands, which is a real reason to refuse a shutdown request. Only batches still in
 * flight are kept: a finished batch is forgotten, so its id can name a later batch.
 */
export class WorkState {
  private readonly batches = new Map<string, Batch>();

  /** Throws when `batch` contradicts what is already known about its batch; records nothing. */
  assertBatchFits(batch: BatchPosition): void {
    if (batch.index > batch.total)
      throw new Error(`batch '${batch.id}': index ${batch.index} is beyond total ${batch.total}`);
    const known = this.batches.get(batch.id);
    if (known && known.total !== batch.total)
      throw new Error(
        `batch '${batch.id}' was started with ${known.total} files, not ${batch.total}`,
      );
  }

  recordBatchWrite(batch: BatchPosition): void {
    this.assertBatchFits(batch);
    const known = this.batches.get(batch.id) ?? { total: batch.total, written: new Set<number>() };
    known.written.add(batch.index);
    if (known.written.size === known.total) this.batches.delete(batch.id);
    else this.batches.set(batch.id, known);
  }

  /** Why stopping now would leave half-written work, or null when nothing is in flight. */
  describeIncompleteBatch(): string | null {
    if (this.batches.size === 0) return null;
    const parts = [...this.batches].map(
      ([id, { total, written }]) => `batch '${id}' has ${written.size} of ${total} files written`,
    );
    return `mid-write: ${parts.join("; ")}`;
  }

  toJSON(): PersistedWorkState {
    return {
      batches: [...this.batches].map(([id, { total, written }]) => ({
        id,
        total,
        written: [...written].sort((a, b) => a - b),
      })),
    };
  }

  /** Restores persisted state; throws on anything malformed rather than trusting a corrupt file. */
  static fromJSON(value: unknown): WorkState {
    const state = new WorkState();
    for (const batch of persistedSchema.parse(value).batches) {
      for (const index of batch.written)
        state.recordBatchWrite({ id: batch.id, index, total: batch.total });
    }
    return state;
  }
}
