import { RulesView } from "@/components/rules/rules-view";

export const metadata = { title: "Rules · Handshake" };

export default function RulesPage() {
  return <RulesView />;
}
