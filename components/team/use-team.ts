"use client";

import {
  keepPreviousData,
  useQuery,
  useQueryClient,
  type QueryClient,
} from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { useConsoleEvent } from "@/components/realtime/console-events";
import { queryKeys } from "@/components/realtime/query-keys";
import { applyBoardEvent, compareNatural, type BoardMember } from "@/lib/shared/agents/board";
import type { TeamMember } from "@/lib/agents/views";
import {
  EVENT_PAYLOAD_SCHEMAS,
  parseEventData,
  type ConsoleEvent,
} from "@/lib/shared/events/catalog";
import { apiFetch } from "@/lib/shared/http/api-fetch";

/** `olderGone`: gone agents that went before those shown (`gone=recent`, the default). */
export type TeamPage = { items: TeamMember[]; nextCursor: string | null; olderGone: number };
type BoardPage = Omit<TeamPage, "items"> & { items: BoardMember[] };

/**
 * Which of the agents that are gone (ended, or offline for over an hour, with nothing pending)
 * the roster holds: those that went last, or every one (decision 091).
 */
export type GoneAgents = "recent" | "all";

export function fetchTeam(gone: GoneAgents = "recent"): Promise<TeamPage> {
  return apiFetch<TeamPage>(gone === "all" ? "/agents?gone=all" : "/agents");
}

/**
 * Heartbeats are not events (a thousand agents beat every few seconds), so heartbeat ages would
 * only grow on a board fed by events alone: the whole board is refetched this often for them.
 */
const HEARTBEAT_REFRESH_MS = 30_000;
/** Events are applied in batches at most this often, so a burst costs a few renders, not one each. */
const PATCH_INTERVAL_MS = 100;

/** The event with its payload checked against the catalog; null for a kind or shape it does not know. */
function checked(event: ConsoleEvent): ConsoleEvent | null {
  if (!Object.hasOwn(EVENT_PAYLOAD_SCHEMAS, event.kind)) return null;
  const data = parseEventData(event.kind, event.data);
  return data ? ({ ...event, data } as ConsoleEvent) : null;
}

/** Replaces one agent's row with the server's, adding it in name order or removing it. */
async function refetchRow(queryClient: QueryClient, name: string): Promise<void> {
  const { items } = await apiFetch<TeamPage>(`/agents?name=${encodeURIComponent(name)}`);
  const fresh = items[0];
  queryClient.setQueriesData<BoardPage>({ queryKey: queryKeys.team }, (page) => {
    if (!page) return page;
    const rest = page.items.filter((member) => member.name !== name);
    if (!fresh) return { ...page, items: rest };
    const index = page.items.findIndex((member) => member.name === name);
    const items = rest.slice();
    if (index >= 0) items.splice(index, 0, fresh);
    else {
      const after = items.findIndex((member) => compareNatural(member.name, name) > 0);
      items.splice(after < 0 ? items.length : after, 0, fresh);
    }
    return { ...page, items };
  });
}

/**
 * The roster. Live events patch the rows they name in the query cache (lib/shared/agents/board.ts); an
 * event that does not carry enough (a new agent, a respawn) fetches that one row. The board itself
 * is fetched on load, every HEARTBEAT_REFRESH_MS and after a gap too long to replay.
 */
export function useTeam(gone: GoneAgents) {
  const queryClient = useQueryClient();
  const team = useQuery<BoardPage>({
    // Events patch every cached board, recent or all (`setQueriesData` on the prefix).
    queryKey: [...queryKeys.team, gone],
    queryFn: () => fetchTeam(gone),
    // The rows shown stay while the other choice loads.
    placeholderData: keepPreviousData,
    staleTime: HEARTBEAT_REFRESH_MS,
    refetchInterval: HEARTBEAT_REFRESH_MS,
  });
  const queue = useRef<ConsoleEvent[]>([]);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  function flush() {
    // Before the first page arrives there is nothing to patch: the events wait for it, as one
    // committed after the page was read may arrive before the page does.
    if (queryClient.getQueryData([...queryKeys.team, gone]) === undefined) {
      timer.current = setTimeout(flush, PATCH_INTERVAL_MS);
      return;
    }
    timer.current = null;
    const events = queue.current;
    queue.current = [];
    const refetch = new Set<string>();
    queryClient.setQueriesData<BoardPage>({ queryKey: queryKeys.team }, (page) => {
      if (!page) return page;
      let members = page.items;
      for (const event of events) {
        const patch = applyBoardEvent(members, event);
        members = patch.members;
        if (patch.refetch) refetch.add(patch.refetch);
      }
      return members === page.items ? page : { ...page, items: members };
    });
    for (const name of refetch) {
      refetchRow(queryClient, name).catch(() => {
        // The periodic refresh brings the row back.
      });
    }
  }

  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );

  useConsoleEvent((event) => {
    const trusted = checked(event);
    if (!trusted) return;
    queue.current.push(trusted);
    timer.current ??= setTimeout(flush, PATCH_INTERVAL_MS);
  });

  return team;
}
