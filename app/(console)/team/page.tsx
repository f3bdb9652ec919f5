import { TeamBoard } from "@/components/team/team-board";
import { listTeamMembers } from "@/lib/agents/data";
import { requireHumanSession } from "@/lib/auth/page-session";
import { getDb } from "@/lib/db";
import { listWorkerScripts } from "@/lib/agents/worker-scripts";

export const metadata = { title: "Team · Handshake" };

export default async function TeamPage() {
  const user = await requireHumanSession();
  // The scripts serve the spawn form, a Lead's action.
  const [members, scripts] = await Promise.all([
    listTeamMembers(getDb()),
    user.role === "lead" ? listWorkerScripts() : [],
  ]);
  return <TeamBoard initialMembers={members} scripts={scripts} />;
}
