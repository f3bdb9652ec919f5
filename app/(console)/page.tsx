import { InboxView } from "@/components/inbox/inbox-view";

export const metadata = { title: "Inbox · Handshake" };

export default function InboxPage() {
  return <InboxView />;
}
