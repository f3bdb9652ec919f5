import { describe, expect, it } from "vitest";
import { isAppError } from "../errors";
import { readJsonBody } from "./body";

function post(body: BodyInit, headers: Record<string, string>): Request {
  return new Request("http://local/api/v1/x", {
    method: "POST",
    body,
    headers,
    ...(body instanceof ReadableStream ? { duplex: "half" } : {}),
  } as RequestInit);
}

async function refusal(request: Request, maxBytes: number): Promise<string | undefined> {
  try {
    await readJsonBody(request, maxBytes);
    return undefined;
  } catch (error) {
    return isAppError(error) ? error.code : String(error);
  }
}

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });
}

describe("readJsonBody", () => {
  it("reads a body of declared length in one piece, without building a web stream", async () => {
    const text = JSON.stringify({ tool: "read_file" });
    const request = post(text, {
      "content-type": "application/json",
      "content-length": String(text.length),
    });
    // The node adapter builds the whole web Request (and a stream) when `body` is touched.
    Object.defineProperty(request, "body", {
      get: () => {
        throw new Error("the body was read as a stream");
      },
    });
    expect(await readJsonBody(request)).toEqual({ tool: "read_file" });
  });

  it("refuses a body larger than the length it declares once past the cap", async () => {
    const request = post(JSON.stringify({ padding: "x".repeat(200) }), {
      "content-type": "application/json",
      "content-length": "10",
    });
    expect(await refusal(request, 100)).toBe("PAYLOAD_TOO_LARGE");
  });

  it("counts a body without a declared length and cuts it off at the cap", async () => {
    const request = post(streamOf('{"padding":"', "x".repeat(80), "x".repeat(80), '"}'), {
      "content-type": "application/json",
    });
    expect(request.headers.get("content-length")).toBeNull();
    expect(await refusal(request, 100)).toBe("PAYLOAD_TOO_LARGE");
    const small = post(streamOf('{"a":', "1}"), { "content-type": "application/json" });
    expect(await readJsonBody(small, 100)).toEqual({ a: 1 });
  });

  it("refuses a declared length over the cap before reading, and bytes that are not UTF-8", async () => {
    const declared = post("{}", { "content-type": "application/json", "content-length": "101" });
    expect(await refusal(declared, 100)).toBe("PAYLOAD_TOO_LARGE");
    const latin1 = post(new Uint8Array([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]), {
      "content-type": "application/json",
      "content-length": "7",
    });
    expect(await refusal(latin1, 100)).toBe("INVALID_JSON");
  });

  it("treats an empty body as an empty object and still requires JSON for a non-empty one", async () => {
    expect(await readJsonBody(post("", { "content-length": "0" }))).toEqual({});
    const form = post("a=1", { "content-type": "application/x-www-form-urlencoded" });
    expect(await refusal(form, 100)).toBe("UNSUPPORTED_MEDIA_TYPE");
  });
});
