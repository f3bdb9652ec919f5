import { NextRequest } from "next/server";
import { describe, expect, it } from "vitest";
import { createApi } from "../lib/api/v1/routes";
import nextConfig from "../next.config";
import { config, proxy } from "../proxy";

function directives(policy: string | null): Map<string, string> {
  return new Map(
    (policy ?? "").split(";").map((part) => {
      const [name = "", ...values] = part.trim().split(/\s+/);
      return [name, values.join(" ")];
    }),
  );
}

describe("the pages' Content Security Policy (proxy.ts)", () => {
  it("gives every page request a fresh nonce, on the response and on the request Next renders", () => {
    const first = proxy(new NextRequest("http://127.0.0.1:3000/"));
    const second = proxy(new NextRequest("http://127.0.0.1:3000/team"));
    const policy = first.headers.get("content-security-policy");
    // NextResponse.next({request}) hands the rewritten request headers to Next this way.
    expect(first.headers.get("x-middleware-request-content-security-policy")).toBe(policy);
    const nonce = /'nonce-([A-Za-z0-9+/=]{20,})'/.exec(policy ?? "")?.[1];
    expect(nonce).toBeDefined();
    expect(second.headers.get("content-security-policy")).not.toContain(`'nonce-${nonce}'`);
  });

  it("runs only scripts carrying the nonce, loads images from our origin only, and refuses framing", () => {
    const policy = directives(
      proxy(new NextRequest("http://127.0.0.1:3000/")).headers.get("content-security-policy"),
    );
    expect(policy.get("script-src")).toMatch(/^'self' 'nonce-[^']+' 'strict-dynamic'$/);
    expect(policy.get("script-src")).not.toContain("unsafe-inline");
    expect(policy.get("img-src")).toBe("'self' data:");
    expect(policy.get("frame-ancestors")).toBe("'none'");
    expect(policy.get("object-src")).toBe("'none'");
    expect(policy.get("base-uri")).toBe("'none'");
  });

  it("covers pages but not the API or static files", () => {
    const [matcher] = config.matcher;
    const pattern = new RegExp(`^${matcher?.source ?? "$^"}$`);
    for (const path of ["/", "/team", "/history", "/agents/alice", "/sign-in"]) {
      expect(pattern.test(path), path).toBe(true);
    }
    for (const path of ["/api/v1/requests", "/_next/static/chunks/a.js"]) {
      expect(pattern.test(path), path).toBe(false);
    }
  });
});

describe("headers on every response (next.config.ts)", () => {
  it("sets nosniff, a same-origin referrer policy and DENY framing on everything Next serves", async () => {
    const rules = (await nextConfig.headers?.()) ?? [];
    const everywhere = rules.find((rule) => rule.source === "/:path*");
    const headers = new Map(everywhere?.headers.map((header) => [header.key, header.value]));
    expect(headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(headers.get("Referrer-Policy")).toBe("same-origin");
    expect(headers.get("X-Frame-Options")).toBe("DENY");
  });
});

describe("headers on every API answer (lib/http/router.ts)", () => {
  it("sets the same headers and a locked-down CSP, on an unknown path too", async () => {
    const response = await createApi().fetch(new Request("http://127.0.0.1:3000/api/v1/nope"));
    expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(response.headers.get("Referrer-Policy")).toBe("same-origin");
    expect(response.headers.get("X-Frame-Options")).toBe("DENY");
    const apiPolicy = directives(response.headers.get("content-security-policy"));
    expect(apiPolicy.get("default-src")).toBe("'none'");
    expect(apiPolicy.get("frame-ancestors")).toBe("'none'");
  });
});
