import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import { getDb } from "../../lib/db";
import { signedInHuman } from "../route-client";

// Next runs a layout once and keeps it across client-side navigations, so a page whose loader
// trusted the layout's session check would serve its data to a request that never passed it.
// Each page is called here as Next calls it for such a navigation: without its layout.

let requestHeaders = new Headers();
vi.mock("next/headers", () => ({ headers: async () => requestHeaders }));

afterAll(() => getDb().$disconnect());

type Page = (props: never) => Promise<unknown>;

const PAGES: [string, () => Promise<Page>, unknown][] = [
  ["inbox", async () => (await import("../../app/(console)/page")).default as Page, {}],
  ["team", async () => (await import("../../app/(console)/team/page")).default as Page, {}],
  [
    "history",
    async () => (await import("../../app/(console)/history/page")).default as Page,
    { searchParams: Promise.resolve({}) },
  ],
  [
    "agent timeline",
    async () => (await import("../../app/(console)/agents/[name]/page")).default as Page,
    { params: Promise.resolve({ name: "nobody" }) },
  ],
];

async function digestOf(run: () => Promise<unknown>): Promise<string | null> {
  try {
    await run();
    return null;
  } catch (error) {
    return String((error as { digest?: unknown }).digest ?? error);
  }
}

describe("each console page checks the session itself", () => {
  beforeEach(() => {
    requestHeaders = new Headers();
  });

  it.each(PAGES)(
    "%s redirects a request without a session to sign-in",
    async (_name, load, props) => {
      const page = await load();
      expect(await digestOf(() => page(props as never))).toMatch(
        /^NEXT_REDIRECT;[a-z]+;\/sign-in;/,
      );
    },
  );

  it.each(PAGES)("%s redirects a signed-out session to sign-in", async (_name, load, props) => {
    const viewer = await signedInHuman("viewer");
    await getDb().session.deleteMany({ where: { user: { email: viewer.email } } });
    requestHeaders = new Headers(viewer.headers);
    const page = await load();
    expect(await digestOf(() => page(props as never))).toMatch(/^NEXT_REDIRECT;[a-z]+;\/sign-in;/);
  });

  it("the team page loads the spawn form's scripts for a Lead, not for a viewer", async () => {
    const team = (await import("../../app/(console)/team/page")).default;
    requestHeaders = new Headers((await signedInHuman("viewer")).headers);
    const forViewer = (await team()) as { props: { scripts: unknown[] } };
    expect(forViewer.props.scripts).toEqual([]);
    requestHeaders = new Headers((await signedInHuman("lead")).headers);
    const forLead = (await team()) as { props: { scripts: unknown[] } };
    expect(forLead.props.scripts.length).toBeGreaterThan(0);
  });
});
