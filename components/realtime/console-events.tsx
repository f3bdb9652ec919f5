"use client";

import { useQueryClient } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from "react";
import { io, type Socket } from "socket.io-client";
import {
  CONSOLE_NAMESPACE,
  CONSOLE_PROTOCOL_VERSION,
  type ClientToServerEvents,
  type ConsoleEvent,
  type PresencePayload,
  type RequestRowPayload,
  type ServerToClientEvents,
} from "@/lib/shared/realtime/contract";
import { readSessionKey } from "@/lib/shared/auth/session-key";
import { setServerClock } from "@/components/ui/server-clock";
import { patchedKeysFor, staleKeysFor } from "./query-keys";

export type ConnectionState = "connecting" | "live" | "offline";
/** `rowFollows`: the event's request row comes next, to `useRequestRow` (decision 035). */
type Listener = (event: ConsoleEvent, rowFollows: boolean) => void;
type RowListener = (payload: RequestRowPayload) => void;

type PresenceListener = (payload: PresencePayload) => void;

type ConsoleEvents = {
  state: ConnectionState;
  subscribe: (listener: Listener) => () => void;
  subscribeRows: (listener: RowListener) => () => void;
  /** Tells the server which card this tab shows (null: none); said again on every reconnect. */
  setViewing: (requestId: string | null) => void;
  subscribePresence: (listener: PresenceListener) => () => void;
};

const ConsoleEventsContext = createContext<ConsoleEvents | null>(null);

/**
 * One socket per tab. Every (re)connect resumes from the last event id this tab has seen, so
 * events that happened while it was offline are replayed, not lost; duplicates are dropped by id.
 * Events mostly tell the query cache what to refetch.
 */
export function ConsoleEventsProvider({
  initialEventId,
  children,
}: {
  initialEventId: number;
  children: ReactNode;
}) {
  const queryClient = useQueryClient();
  const [state, setState] = useState<ConnectionState>("connecting");
  const lastId = useRef(initialEventId);
  const listeners = useRef(new Set<Listener>());
  const rowListeners = useRef(new Set<RowListener>());
  // Rows announced by `rowFollows` and not arrived yet: a lost connection answers them with none.
  const awaitedRows = useRef(new Set<string>());
  const presenceListeners = useRef(new Set<PresenceListener>());
  const viewing = useRef<string | null>(null);
  const socketRef = useRef<Socket<ServerToClientEvents, ClientToServerEvents> | null>(null);
  const [events] = useState<ConsoleEvents>(() => ({
    state: "connecting",
    subscribe: (listener) => {
      listeners.current.add(listener);
      return () => listeners.current.delete(listener);
    },
    subscribeRows: (listener) => {
      rowListeners.current.add(listener);
      return () => rowListeners.current.delete(listener);
    },
    setViewing: (requestId) => {
      viewing.current = requestId;
      socketRef.current?.emit("viewing", { requestId });
    },
    subscribePresence: (listener) => {
      presenceListeners.current.add(listener);
      return () => presenceListeners.current.delete(listener);
    },
  }));

  useEffect(() => {
    const socket: Socket<ServerToClientEvents, ClientToServerEvents> = io(CONSOLE_NAMESPACE, {
      transports: ["websocket"],
      withCredentials: true,
      // Read at every attempt: a reconnect after a sign-in in another tab sends the new key.
      auth: (send) => send({ sessionKey: readSessionKey() }),
    });
    socketRef.current = socket;
    socket.on("connect", () => {
      setState("live");
      socket.emit("resume", { after: lastId.current });
      if (viewing.current) socket.emit("viewing", { requestId: viewing.current });
    });
    socket.on("clock", ({ now }) => setServerClock(now));
    socket.on("presence", (payload) => {
      for (const listener of presenceListeners.current) listener(payload);
    });
    const deliverRow = (payload: RequestRowPayload) => {
      if (!awaitedRows.current.delete(payload.requestId)) return;
      for (const listener of rowListeners.current) listener(payload);
    };
    socket.on("requestRow", deliverRow);
    socket.on("disconnect", () => {
      setState("offline");
      for (const requestId of [...awaitedRows.current]) deliverRow({ requestId, row: null });
    });
    socket.on("connect_error", () => setState("offline"));
    socket.on("resumed", ({ lastId: resumedAt, version, isTruncated }) => {
      // The server speaks another version of the contract than this page was built for: only a
      // fresh page reads its events right.
      if (version !== CONSOLE_PROTOCOL_VERSION) {
        window.location.reload();
        return;
      }
      // Too far behind for a replay: the queries are the state, so refetch them all.
      if (!isTruncated) return;
      lastId.current = Math.max(lastId.current, resumedAt);
      void queryClient.invalidateQueries();
    });
    socket.on("error", ({ code }) => {
      // Signed out, disabled or given another role elsewhere: the page's own session check
      // decides what comes next (the sign-in page, or the console with the new role).
      if (code === "SESSION_ENDED") window.location.reload();
      // The replay failed: a new connection resumes from the last event this tab has seen.
      else if (code === "INTERNAL") socket.disconnect().connect();
    });
    socket.on("event", (event, rowFollows) => {
      if (event.id <= lastId.current) return;
      lastId.current = event.id;
      for (const key of staleKeysFor(event.kind))
        void queryClient.invalidateQueries({ queryKey: key });
      for (const key of patchedKeysFor(event.kind))
        void queryClient.invalidateQueries({ queryKey: key, exact: true, refetchType: "none" });
      const requestId = "requestId" in event.data ? event.data.requestId : undefined;
      const isRowFollowing = rowFollows === true && typeof requestId === "string";
      if (isRowFollowing) awaitedRows.current.add(requestId);
      for (const listener of listeners.current) listener(event, isRowFollowing);
    });
    return () => {
      socketRef.current = null;
      socket.disconnect();
    };
  }, [queryClient]);

  return (
    <ConsoleEventsContext.Provider value={{ ...events, state }}>
      {children}
    </ConsoleEventsContext.Provider>
  );
}

function useConsoleEvents(): ConsoleEvents {
  const context = useContext(ConsoleEventsContext);
  if (!context) throw new Error("console events are available inside the console layout only");
  return context;
}

export function useConnectionState(): ConnectionState {
  return useConsoleEvents().state;
}

/** Calls `listener` for every live event (after the cache has been told). */
export function useConsoleEvent(listener: Listener): void {
  const { subscribe } = useConsoleEvents();
  const latest = useRef(listener);
  useEffect(() => {
    latest.current = listener;
  });
  useEffect(() => subscribe((event, rowFollows) => latest.current(event, rowFollows)), [subscribe]);
}

/**
 * Calls `listener` with each request row the socket sends after an event that said `rowFollows`
 * (decision 035), or with `row: null` when it will not come (unreadable, connection lost).
 */
export function useRequestRow(listener: RowListener): void {
  const { subscribeRows } = useConsoleEvents();
  const latest = useRef(listener);
  useEffect(() => {
    latest.current = listener;
  });
  useEffect(() => subscribeRows((payload) => latest.current(payload)), [subscribeRows]);
}

/** Who else has `requestId` open, as the server last said; this tab shows it while mounted. */
export function useCardViewers(requestId: string): string[] {
  const { setViewing, subscribePresence } = useConsoleEvents();
  const [viewers, setViewers] = useState<string[]>([]);
  useEffect(() => {
    const unsubscribe = subscribePresence((payload) => {
      if (payload.requestId === requestId) {
        setViewers(payload.viewers.map((viewer) => viewer.email));
      }
    });
    setViewing(requestId);
    return () => {
      unsubscribe();
      setViewing(null);
    };
  }, [requestId, setViewing, subscribePresence]);
  return viewers;
}
