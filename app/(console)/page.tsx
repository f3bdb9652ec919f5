import { InboxView } from "@/components/inbox/inbox-view";
import { requireHumanSession } from "@/lib/auth/page-session";

export const metadata = { title: "Inbox · Handshake" };

// Each page checks the session itself: Next does not re-run the layout on client-side navigation.
export default async function InboxPage() {
  await requireHumanSession();
  return <InboxView />;
}
