import { AppError } from "../errors";

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

async function readCapped(request: Request, maxBytes: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) {
    throw new AppError("PAYLOAD_TOO_LARGE", `body exceeds ${maxBytes} bytes`);
  }
  if (!request.body) return "";
  // Content-Length can be absent (chunked) or wrong, so count what actually arrives.
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new AppError("PAYLOAD_TOO_LARGE", `body exceeds ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
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
