import { TeamBoard } from "@/components/team/team-board";
import { listTeamMembers } from "@/lib/agents/data";
import { getDb } from "@/lib/db";
import { listWorkerScripts } from "./worker-scripts";

export const metadata = { title: "Team · Handshake" };

export default async function TeamPage() {
  const [members, scripts] = await Promise.all([listTeamMembers(getDb()), listWorkerScripts()]);
  return <TeamBoard initialMembers={members} scripts={scripts} />;
}
