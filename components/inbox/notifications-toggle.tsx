"use client";

import { useState, useSyncExternalStore } from "react";
import { useConsoleEvent } from "@/components/realtime/console-events";
import { Button } from "@/components/ui/button";

type Permission = NotificationPermission | "unsupported";

/**
 * The browser's answer, read once and again whenever the Permissions API says it changed (site
 * settings, another tab), not on each render: in Chromium `Notification.permission` asks the
 * browser process (about a millisecond, traced on a 2-core machine), and the inbox renders once
 * a second and for every request that arrives.
 */
let knownPermission: Permission | null = null;

function readPermission(): Permission {
  knownPermission ??= typeof Notification === "undefined" ? "unsupported" : Notification.permission;
  return knownPermission;
}

function subscribeToPermission(onChange: () => void): () => void {
  // Changed, perhaps, while no inbox was open to hear it; React reads again once subscribed.
  knownPermission = null;
  let status: PermissionStatus | null = null;
  let isUnsubscribed = false;
  const reread = () => {
    knownPermission = null;
    onChange();
  };
  navigator.permissions
    ?.query({ name: "notifications" })
    .then((answer) => {
      if (isUnsubscribed) return;
      status = answer;
      status.addEventListener("change", reread);
    })
    .catch(() => undefined);
  return () => {
    isUnsubscribed = true;
    status?.removeEventListener("change", reread);
  };
}

/** Opt-in desktop notifications for new requests, shown only while the tab is in the background. */
export function NotificationsToggle() {
  // The server has no Notification API; the browser's answer is read after hydration.
  const browserPermission = useSyncExternalStore(
    subscribeToPermission,
    readPermission,
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
