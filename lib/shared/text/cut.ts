/**
 * The first `maxUnits` UTF-16 units of `text`, less the half of a character a cut there would
 * leave. A lone surrogate is not text that PostgreSQL's jsonb, the API's door or
 * `encodeURIComponent` takes, so every cut of text that travels on is made here.
 */
export function cutText(text: string, maxUnits: number): string {
  const cut = text.slice(0, maxUnits);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}
