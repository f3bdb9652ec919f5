import { readHistoryFilters } from "@/components/history/history-filters";
import { HistoryView } from "@/components/history/history-view";
import { requireHumanSession } from "@/lib/auth/page-session";
import { PROTOCOL_TYPES } from "@/lib/protocol/registry";

export const metadata = { title: "History · Handshake" };

export default async function HistoryPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  await requireHumanSession();
  const filters = readHistoryFilters(await searchParams);
  return <HistoryView initialFilters={filters} requestTypes={PROTOCOL_TYPES} />;
}
