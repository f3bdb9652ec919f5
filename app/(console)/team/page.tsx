import { TeamBoard } from "@/components/team/team-board";
import { requireHumanSession } from "@/lib/auth/page-session";
import { listWorkerScripts } from "@/lib/agents/worker-scripts";

export const metadata = { title: "Team · Handshake" };

export default async function TeamPage() {
  const user = await requireHumanSession();
  // The scripts serve the spawn form, a Lead's action. The team itself the page fetches with the
  // session's key: rendered here, it would be read by whoever holds the cookie (decision 080).
  const scripts = user.role === "lead" ? await listWorkerScripts() : [];
  return <TeamBoard scripts={scripts} />;
}
