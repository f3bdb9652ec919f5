import { createHash } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import {
  FILE_ABSENT,
  FILE_UNREADABLE,
  MAX_DIFF_BYTES,
  proposeContent,
  type FileChange,
} from "./file-change";
import { cutText } from "../text/cut";

/**
 * Builds the `file` of a tool call from what the caller found on disk (the worker in its
 * workspace, the connector's hook on the user's machine). Node only: the browser never hashes.
 */

/** The content hash an approval binds: SHA-256 of the file's bytes. */
export function hashFileBytes(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** What the caller found at the path. */
export type FileOnDisk =
  | { kind: "absent" }
  | { kind: "bytes"; bytes: Uint8Array }
  /** Too big to read whole: only its hash, taken by streaming. */
  | { kind: "hashed"; baseHash: string; size: number }
  | { kind: "unreadable"; detail: string };

/** The base hash of what was found: the value both the approval and the write-time check use. */
export function baseHashOf(found: FileOnDisk): string {
  switch (found.kind) {
    case "absent":
      return FILE_ABSENT;
    case "bytes":
      return hashFileBytes(found.bytes);
    case "hashed":
      return found.baseHash;
    case "unreadable":
      return FILE_UNREADABLE;
  }
}

/** Bytes that are UTF-8 text and come back byte for byte, so the diff is of exactly the file. */
export function decodeText(bytes: Uint8Array): string | null {
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    return Buffer.from(text, "utf8").equals(bytes) ? text : null;
  } catch {
    return null;
  }
}

/** How much of why a change is not shown travels with the call. */
const DETAIL_UNITS = 500;

export function snapshotFileChange(
  tool: string,
  args: Record<string, unknown>,
  path: string,
  found: FileOnDisk,
): FileChange {
  const baseHash = baseHashOf(found);
  if (found.kind === "unreadable") {
    return {
      path,
      baseHash,
      unshown: { reason: "unreadable", detail: cutText(found.detail, DETAIL_UNITS) },
    };
  }
  if (found.kind === "hashed") {
    return {
      path,
      baseHash,
      unshown: { reason: "too_large", detail: `the file is ${found.size} bytes` },
    };
  }
  const before = found.kind === "absent" ? "" : decodeText(found.bytes);
  if (before === null) return { path, baseHash, unshown: { reason: "not_text" } };
  const proposed = proposeContent(tool, args, before);
  const shownBefore =
    Buffer.byteLength(JSON.stringify(before), "utf8") <= MAX_DIFF_BYTES ? before : undefined;
  if (!proposed.ok) {
    const detail = cutText(proposed.problem, DETAIL_UNITS);
    if (proposed.reason === "too_large")
      return { path, baseHash, unshown: { reason: "too_large", detail } };
    return {
      path,
      baseHash,
      ...(shownBefore === undefined ? {} : { before: shownBefore }),
      unshown: { reason: "does_not_apply", detail },
    };
  }
  // Measured as sent (JSON-escaped), so the call's body stays within the route's cap.
  const size =
    Buffer.byteLength(JSON.stringify(before), "utf8") +
    Buffer.byteLength(JSON.stringify(proposed.after), "utf8");
  if (size > MAX_DIFF_BYTES) {
    return {
      path,
      baseHash,
      unshown: { reason: "too_large", detail: `the two sides are ${size} bytes` },
    };
  }
  return { path, baseHash, before, after: proposed.after };
}

/** Past this a file is hashed in pieces and its diff is not shown. */
const MAX_WHOLE_READ_BYTES = 8 * 1024 * 1024;
const HASH_CHUNK_BYTES = 1024 * 1024;

/** What an opened file holds, read through the handle (so it is the file that was checked). */
export async function readOpenedFile(handle: FileHandle): Promise<FileOnDisk> {
  const info = await handle.stat();
  if (!info.isFile()) return { kind: "unreadable", detail: "not a regular file" };
  if (info.size <= MAX_WHOLE_READ_BYTES) {
    const buffer = Buffer.alloc(info.size);
    const { bytesRead } = await handle.read(buffer, 0, info.size, 0);
    // Grown since the stat: hash all of it rather than a prefix.
    if (bytesRead === info.size && (await handle.stat()).size === info.size) {
      return { kind: "bytes", bytes: buffer };
    }
  }
  const hash = createHash("sha256");
  const chunk = Buffer.alloc(HASH_CHUNK_BYTES);
  let position = 0;
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    hash.update(chunk.subarray(0, bytesRead));
    position += bytesRead;
  }
  return { kind: "hashed", baseHash: `sha256:${hash.digest("hex")}`, size: position };
}
