"use client";

import { useState, useSyncExternalStore } from "react";
import { useConsoleEvent } from "@/components/realtime/console-events";
import { Button } from "@/components/ui/button";

const subscribeToNothing = () => () => undefined;

/** Opt-in desktop notifications for new requests, shown only while the tab is in the background. */
export function NotificationsToggle() {
  // The server has no Notification API; the browser's answer is read after hydration.
  const browserPermission = useSyncExternalStore(
    subscribeToNothing,
    () => (typeof Notification === "undefined" ? "unsupported" : Notification.permission),
    () => "unsupported" as const,
  );
  const [answered, setPermission] = useState<NotificationPermission | null>(null);
  const permission = answered ?? browserPermission;

  useConsoleEvent((event) => {
    if (event.kind !== "request.created" || event.data.target !== "lead") return;
    if (permission !== "granted" || document.visibilityState === "visible") return;
    new Notification(`Handshake: ${String(event.data.agent)} needs you`, {
      body: `New ${String(event.data.type).replace("_", " ")} request`,
      tag: String(event.data.requestId),
    });
  });

  if (permission === "unsupported") return null;
  if (permission === "granted")
    return <span className="text-xs text-slate-500">Notifications on</span>;
  return (
    <Button
      variant="secondary"
      disabled={permission === "denied"}
      onClick={() => void Notification.requestPermission().then(setPermission)}
    >
      {permission === "denied" ? "Notifications blocked" : "Enable notifications"}
    </Button>
  );
}
