import { afterAll, beforeAll } from "vitest";
import { getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import { startEventBridge, type EventBridge } from "../../lib/realtime/event-bridge";
import { getEventHub } from "../../lib/realtime/event-hub";

/**
 * For a test file whose routes wait on events (long-polls): as in server.ts, NOTIFY → bridge →
 * hub → the waiting route handler. Also disconnects the database client after the file.
 */
export function runEventBridgeDuringFile(): void {
  let bridge: EventBridge;
  beforeAll(async () => {
    bridge = await startEventBridge({
      databaseUrl: requireDatabaseUrl(),
      db: getDb(),
      hub: getEventHub(),
    });
  });
  afterAll(async () => {
    await bridge.stop();
    await getDb().$disconnect();
  });
}
