import { InboxView } from "@/components/inbox/inbox-view";
import { getDb } from "@/lib/db";
import { listPendingRequests } from "@/lib/requests/data";

export const metadata = { title: "Inbox · Handshake" };

export default async function InboxPage() {
  const requests = await listPendingRequests(getDb());
  return <InboxView requests={requests} />;
}
