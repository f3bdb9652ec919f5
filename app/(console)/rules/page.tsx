import { RulesView } from "@/components/rules/rules-view";
import { requireHumanSession } from "@/lib/auth/page-session";

export const metadata = { title: "Rules · Handshake" };

export default async function RulesPage() {
  await requireHumanSession();
  return <RulesView />;
}
