import { describe, expect, it } from "vitest";
import { encodedJsonOf, jsonResponse } from "./route";

const data = { id: "req_1", approved: true, note: "ünïcode ✓", count: 12n };
const text = '{"id":"req_1","approved":true,"note":"ünïcode ✓","count":12}';

describe("jsonResponse", () => {
  it("keeps the text it was made from for the node listener, and only its own answers'", () => {
    const response = jsonResponse(data, { status: 201 });
    expect(encodedJsonOf(response)).toBe(text);
    expect(encodedJsonOf(new Response(text))).toBeUndefined();
    expect(encodedJsonOf(new Response(response.body, response))).toBeUndefined();
  });

  it("reads back as the answer it encodes, by every reader a Response has", async () => {
    const make = () => jsonResponse(data, { status: 201, headers: { allow: "GET" } });
    const response = make();
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("allow")).toBe("GET");
    expect(await make().text()).toBe(text);
    expect(await make().json()).toEqual({ ...data, count: 12 });
    expect(new TextDecoder().decode(await make().arrayBuffer())).toBe(text);
    expect(await (await make().blob()).text()).toBe(text);
    expect(new TextDecoder().decode(await make().bytes())).toBe(text);
    const streamed = await new Response(make().body).text();
    expect(streamed).toBe(text);
  });

  it("answers every way Node's Response has of reading a body from its text", () => {
    const ownReaders = Object.getOwnPropertyNames(Object.getPrototypeOf(jsonResponse(data)));
    const readers = Object.entries(Object.getOwnPropertyDescriptors(Response.prototype))
      .filter(
        ([name, descriptor]) => name !== "constructor" && typeof descriptor.value === "function",
      )
      .map(([name]) => name);
    expect(readers.length).toBeGreaterThan(0);
    expect(readers.filter((name) => !ownReaders.includes(name))).toEqual([]);
    expect(ownReaders).toEqual(expect.arrayContaining(["body", "bodyUsed"]));
  });

  it("refuses a status that has no body, as a Response made with one does", () => {
    for (const status of [204, 205, 304]) {
      expect(() => new Response("{}", { status })).toThrow(TypeError);
      expect(() => jsonResponse(data, { status })).toThrow(TypeError);
    }
  });

  it("is read once, as a Response is, and a clone reads apart from it", async () => {
    const response = jsonResponse(data);
    expect(response.bodyUsed).toBe(false);
    const copy = response.clone();
    expect(await response.text()).toBe(text);
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
    expect(await copy.json()).toEqual({ ...data, count: 12 });
  });

  it("carries headers set after it was made, as the router's security headers are", async () => {
    const response = jsonResponse(data, { status: 404 });
    response.headers.set("x-frame-options", "DENY");
    const remade = new Response(response.body, response);
    expect(remade.status).toBe(404);
    expect(remade.headers.get("x-frame-options")).toBe("DENY");
    expect(await remade.text()).toBe(text);
  });
});
