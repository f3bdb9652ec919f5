import { createHmac, timingSafeEqual } from "node:crypto";
import type pg from "pg";
import type { ConsoleEvent } from "../shared/realtime/contract";

/**
 * What one notification on the events channel says (prisma/migrations/016): the id, and the event
 * itself when the payload carries it under a valid HMAC. `id` is undefined for a payload that
 * names no id. Anyone connected to the database can notify the channel, so nothing here is
 * trusted that the key did not sign; an unsigned or malformed payload is only a hint to read.
 */
export type EventNotification = { id: number | undefined; event: ConsoleEvent | undefined };

const ID = /^[1-9][0-9]{0,15}$/;
const MAC = /^[0-9a-f]{64}$/;
const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The key the events trigger signs payloads with; read once per LISTEN connection. */
export async function readEventNotifyKey(connection: pg.ClientBase): Promise<Buffer | undefined> {
  const { rows } = await connection.query<{ key: Buffer }>(
    "SELECT key FROM handshake_private.event_notify_key",
  );
  return rows[0]?.key;
}

export function parseEventNotification(
  payload: string,
  key: Buffer | undefined,
): EventNotification {
  const idEnd = payload.indexOf(" ");
  const idText = idEnd < 0 ? payload : payload.slice(0, idEnd);
  if (!ID.test(idText)) return { id: undefined, event: undefined };
  const id = Number(idText);
  const macEnd = idEnd < 0 ? -1 : payload.indexOf(" ", idEnd + 1);
  const macText = payload.slice(idEnd + 1, macEnd);
  if (!key || macEnd < 0 || !MAC.test(macText)) return { id, event: undefined };
  const body = payload.slice(macEnd + 1);
  const expected = createHmac("sha256", key).update(body).digest();
  if (!timingSafeEqual(Buffer.from(macText, "hex"), expected)) return { id, event: undefined };
  const event = toConsoleEvent(body);
  return { id, event: event?.id === id ? event : undefined };
}

/** The signed JSON, in the shape and key order `lib/events/data.ts` reads rows into. */
function toConsoleEvent(body: string): ConsoleEvent | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const { id, kind, subject, data, at } = parsed as Record<string, unknown>;
  if (!Number.isSafeInteger(id) || typeof kind !== "string" || typeof subject !== "string") {
    return undefined;
  }
  if (data === undefined || typeof at !== "string" || !AT.test(at)) return undefined;
  // Written only through appendEvent, whose payloads the catalog types.
  return {
    id,
    subject,
    at,
    ...({ kind, data } as Pick<ConsoleEvent, "kind" | "data">),
  } as ConsoleEvent;
}
