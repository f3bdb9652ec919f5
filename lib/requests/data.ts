import type { Db } from "../db";

export type PendingRequestSummary = {
  id: string;
  type: string;
  sender: string;
  target: string;
  createdAt: Date;
  expiresAt: Date;
};

/** Pending requests, the one blocking longest first. */
export async function listPendingRequests(db: Db): Promise<PendingRequestSummary[]> {
  return db.request.findMany({
    where: { status: "pending" },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: { id: true, type: true, sender: true, target: true, createdAt: true, expiresAt: true },
    take: 200,
  });
}
