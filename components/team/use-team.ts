"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useConsoleEvent } from "@/components/realtime/console-events";
import { queryKeys } from "@/components/realtime/query-keys";
import type { TeamMember } from "@/lib/agents/views";
import { parseEventData } from "@/lib/shared/events/catalog";
import { apiFetch } from "@/lib/shared/http/api-fetch";

export type TeamPage = { items: TeamMember[]; nextCursor: string | null };

export function fetchTeam(): Promise<TeamPage> {
  return apiFetch<TeamPage>("/agents");
}

/**
 * The roster, refetched on every agent, request, tool or message event. Status changes are also
 * applied straight from the event, so a short-lived state (working for a moment before asking
 * for approval) is shown rather than skipped by a refetch that lands after it.
 */
export function useTeam(initialMembers?: TeamMember[]) {
  const queryClient = useQueryClient();
  const team = useQuery({
    queryKey: queryKeys.agents,
    queryFn: fetchTeam,
    ...(initialMembers ? { initialData: { items: initialMembers, nextCursor: null } } : {}),
  });

  useConsoleEvent((event) => {
    if (event.kind !== "agent.updated" && event.kind !== "agent.stopped") return;
    const change = parseEventData(event.kind, event.data);
    if (!change) return;
    const { agent, incarnation, status } = change;
    const gate = "gate" in change ? change.gate : undefined;
    queryClient.setQueryData<TeamPage>(queryKeys.agents, (page) =>
      page
        ? {
            ...page,
            items: page.items.map((member) =>
              member.name === agent && member.incarnation === incarnation
                ? { ...member, status, ...(gate ? { gate } : {}) }
                : member,
            ),
          }
        : page,
    );
  });

  return team;
}
