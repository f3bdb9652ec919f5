import { notFound } from "next/navigation";
import { AgentTimeline } from "@/components/timeline/agent-timeline";
import { agentNameSchema } from "@/lib/agents/schema";
import { requireHumanSession } from "@/lib/auth/page-session";

type Props = { params: Promise<{ name: string }> };

export async function generateMetadata({ params }: Props) {
  return { title: `${(await params).name} · Handshake` };
}

export default async function AgentPage({ params }: Props) {
  await requireHumanSession();
  const name = agentNameSchema.safeParse((await params).name);
  if (!name.success) notFound();
  return <AgentTimeline name={name.data} />;
}
