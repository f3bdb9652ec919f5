import { TokensView } from "@/components/settings/tokens-view";
import { requireHumanSession } from "@/lib/auth/page-session";

export const metadata = { title: "Settings · Handshake" };

export default async function SettingsPage() {
  await requireHumanSession();
  return <TokensView />;
}
