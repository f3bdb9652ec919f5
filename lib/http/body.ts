import { AppError } from "../errors";

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

function tooLarge(maxBytes: number): AppError {
  return new AppError("PAYLOAD_TOO_LARGE", `body exceeds ${maxBytes} bytes`);
}

/** A body with no declared length (chunked) is counted as it arrives, and cut off at the cap. */
async function readCounted(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

async function readCapped(request: Request, maxBytes: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  // A declared length within the cap bounds what Node's HTTP parser lets arrive, so the body is
  // read in one piece through the adapter's direct read (touching `request.body` would build a
  // web stream first); its size is still checked, since a Request built in process carries
  // whatever header it was given.
  let bytes: Uint8Array;
  if (declared !== null && /^\d+$/.test(declared)) {
    bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > maxBytes) throw tooLarge(maxBytes);
  } else if (request.body) {
    bytes = await readCounted(request.body, maxBytes);
  } else {
    return "";
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new AppError("INVALID_JSON", "body is not valid UTF-8");
  }
}

/** Reads a JSON body: content type checked, size capped, parse errors reported as INVALID_JSON. */
export async function readJsonBody(
  request: Request,
  maxBytes = DEFAULT_MAX_BODY_BYTES,
): Promise<unknown> {
  const text = await readCapped(request, maxBytes);
  if (text.trim() === "") return {};
  const contentType = request.headers.get("content-type") ?? "";
  // Requiring JSON also means a cross-site HTML form (which cannot send this type) never gets here.
  if (!/^application\/json\s*(;|$)/i.test(contentType)) {
    throw new AppError(
      "UNSUPPORTED_MEDIA_TYPE",
      "send the body as 'Content-Type: application/json'",
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new AppError("INVALID_JSON", `body is not valid JSON: ${(error as Error).message}`);
  }
}
