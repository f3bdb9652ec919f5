import { describe, expect, it } from "vitest";
import { QuietInboxes } from "./quiet-inboxes";

const ada = { agentId: "a-1", incarnation: 2 };
const key = "inbox:ada";

/** An inbox answered with message 41 on this node, its own `message.sent` seen. */
function answered(): QuietInboxes {
  const inboxes = new QuietInboxes();
  inboxes.noteMessage(key, 41);
  inboxes.markAnswered(key, ada, 41);
  return inboxes;
}

describe("inboxes known quiet past the message they were answered with (decision 065)", () => {
  it("is quiet after that message, or after a later cursor, once", () => {
    const inboxes = answered();
    expect(inboxes.takeQuietAfter(key, ada, 41n)).toBe(true);
    expect(inboxes.takeQuietAfter(key, ada, 41n)).toBe(false);
    const again = answered();
    expect(again.takeQuietAfter(key, ada, 500n)).toBe(true);
  });

  it("is not quiet from before that message", () => {
    expect(answered().takeQuietAfter(key, ada, 40n)).toBe(false);
  });

  it("is not quiet once a later message was seen, and stays quiet when an earlier one comes late", () => {
    const later = answered();
    later.noteMessage(key, 42);
    expect(later.takeQuietAfter(key, ada, 41n)).toBe(false);
    const earlier = answered();
    earlier.noteMessage(key, 12);
    expect(earlier.takeQuietAfter(key, ada, 41n)).toBe(true);
  });

  it("is not quiet for another incarnation or agent under the name, nor for another name", () => {
    expect(answered().takeQuietAfter(key, { ...ada, incarnation: 3 }, 41n)).toBe(false);
    expect(answered().takeQuietAfter(key, { ...ada, agentId: "a-2" }, 41n)).toBe(false);
    expect(answered().takeQuietAfter("inbox:bob", ada, 41n)).toBe(false);
  });

  it("is not quiet for an inbox whose newest message it forgot or never saw", () => {
    const forgotten = answered();
    for (let index = 0; index < 100_000; index++) forgotten.noteMessage(`inbox:${index}`, 1);
    expect(forgotten.takeQuietAfter(key, ada, 41n)).toBe(false);
    const unseen = new QuietInboxes();
    unseen.markAnswered(key, ada, 41);
    expect(unseen.takeQuietAfter(key, ada, 41n)).toBe(false);
  });

  it("forgets the inboxes quiet the longest first", () => {
    const inboxes = answered();
    for (let index = 0; index < 99_998; index++) inboxes.noteMessage(`inbox:${index}`, 1);
    inboxes.noteMessage(key, 41);
    inboxes.noteMessage("inbox:one more", 1);
    inboxes.noteMessage("inbox:and another", 1);
    expect(inboxes.takeQuietAfter(key, ada, 41n)).toBe(true);
  });

  it("keeps at most ten thousand marks, the newest", () => {
    const inboxes = new QuietInboxes();
    for (let index = 0; index <= 10_000; index++) {
      inboxes.noteMessage(`inbox:${index}`, 41);
      inboxes.markAnswered(`inbox:${index}`, ada, 41);
    }
    expect(inboxes.takeQuietAfter("inbox:0", ada, 41n)).toBe(false);
    expect(inboxes.takeQuietAfter("inbox:1", ada, 41n)).toBe(true);
    expect(inboxes.takeQuietAfter("inbox:10000", ada, 41n)).toBe(true);
  });
});
