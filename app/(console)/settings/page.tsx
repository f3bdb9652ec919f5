import { TokensView } from "@/components/settings/tokens-view";

export const metadata = { title: "Settings · Handshake" };

export default function SettingsPage() {
  return <TokensView />;
}
