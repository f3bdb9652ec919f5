import { notFound } from "next/navigation";
import { AgentTimeline } from "@/components/timeline/agent-timeline";
import { getAgentDetail } from "@/lib/agents/data";
import { agentNameSchema } from "@/lib/agents/schema";
import { requireHumanSession } from "@/lib/auth/page-session";
import { getDb } from "@/lib/db";
import { isAppError } from "@/lib/errors";

type Props = { params: Promise<{ name: string }> };

export async function generateMetadata({ params }: Props) {
  return { title: `${(await params).name} · Handshake` };
}

export default async function AgentPage({ params }: Props) {
  await requireHumanSession();
  const name = agentNameSchema.safeParse((await params).name);
  if (!name.success) notFound();
  const agent = await getAgentDetail(getDb(), name.data).catch((error: unknown) => {
    if (isAppError(error) && error.code === "AGENT_NOT_FOUND") notFound();
    throw error;
  });
  return <AgentTimeline initialAgent={agent} />;
}
