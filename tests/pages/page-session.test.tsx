import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import { getDb } from "../../lib/db";
import { signedInHuman, signInAs } from "../route-client";

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
  ["rules", async () => (await import("../../app/(console)/rules/page")).default as Page, {}],
  ["settings", async () => (await import("../../app/(console)/settings/page")).default as Page, {}],
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

  it.each(PAGES)(
    "%s finds the person's session behind junk session cookies another port set first",
    async (_name, load, props) => {
      // Round eleven: read as one header, the first cookie alone counted, and every page but the
      // inbox's sent the Lead to sign in, however often they signed in again.
      const lead = await signedInHuman("lead");
      const junk = ["tossed", "tossed.garbage", "a.b"].map((v) => `handshake.session_token=${v}`);
      requestHeaders = new Headers({ cookie: `${junk.join("; ")}; ${lead.cookie}` });
      const page = await load();
      expect(await digestOf(() => page(props as never))).toBeNull();
    },
  );

  it("takes the newest live session of several, so signing in again mends a tossed one", async () => {
    const team = (await import("../../app/(console)/team/page")).default;
    const scriptsFor = async (cookie: string) => {
      requestHeaders = new Headers({ cookie });
      return ((await team()) as { props: { scripts: unknown[] } }).props.scripts;
    };
    const lead = await signedInHuman("lead");
    const tossed = await signedInHuman("viewer");
    expect(await scriptsFor(`${tossed.cookie}; ${lead.cookie}`)).toEqual([]);
    const again = await signInAs(lead.email, lead.password);
    expect((await scriptsFor(`${tossed.cookie}; ${again.cookie}`)).length).toBeGreaterThan(0);
    expect((await scriptsFor(`${again.cookie}; ${tossed.cookie}`)).length).toBeGreaterThan(0);
  });

  it("shows the sign-in page's form as signed in behind a junk cookie, not as signed out", async () => {
    const signIn = (await import("../../app/sign-in/page")).default;
    const hasSessionOf = async (cookie: string) => {
      requestHeaders = new Headers({ cookie });
      const page = (await signIn()) as { props: { children: unknown } };
      return JSON.stringify(page.props.children).includes('"hasSession":true');
    };
    const lead = await signedInHuman("lead");
    expect(await hasSessionOf(`handshake.session_token=tossed; ${lead.cookie}`)).toBe(true);
    expect(await hasSessionOf("handshake.session_token=tossed")).toBe(false);
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
