/**
 * Glob matching in time proportional to the text times the pattern, whatever either holds.
 * Compiled to a backtracking RegExp, as most glob libraries do, `*a*a*a*b` against a command of a
 * thousand `a`s took seconds per extra star and held the node's event loop: a Lead's rule and an
 * agent's long command were enough to stop every other call. This is the algorithm of Russ Cox,
 * "Glob Matching Can Be Simple And Fast Too" (research.swtch.com/glob, 2017): on a mismatch, only
 * the most recent star is retried one step further, which is enough for a pattern whose only
 * wildcards are `*` and `?` (decision 069).
 */

/** Any run of elements, the empty one included. */
export const ANY_RUN = Symbol("anyRun");
/** Exactly one element. */
export const ANY_ONE = Symbol("anyOne");

export type GlobToken<Literal> = Literal | typeof ANY_RUN | typeof ANY_ONE;

/** Whether `tokens` match all of `elements`, a literal token matching as `isSame` says. */
export function matchesGlob<Literal, Element>(
  tokens: readonly GlobToken<Literal>[],
  elements: ArrayLike<Element>,
  isSame: (literal: Literal, element: Element) => boolean,
): boolean {
  let tokenAt = 0;
  let elementAt = 0;
  // Where to resume after a mismatch: the last star, taking one element more. 0: no star yet.
  let retryTokenAt = 0;
  let retryElementAt = 0;
  while (tokenAt < tokens.length || elementAt < elements.length) {
    if (tokenAt < tokens.length) {
      const token = tokens[tokenAt] as GlobToken<Literal>;
      if (token === ANY_RUN) {
        retryTokenAt = tokenAt;
        retryElementAt = elementAt + 1;
        tokenAt += 1;
        continue;
      }
      if (
        elementAt < elements.length &&
        (token === ANY_ONE || isSame(token, elements[elementAt] as Element))
      ) {
        tokenAt += 1;
        elementAt += 1;
        continue;
      }
    }
    if (retryElementAt > 0 && retryElementAt <= elements.length) {
      tokenAt = retryTokenAt;
      elementAt = retryElementAt;
      continue;
    }
    return false;
  }
  return true;
}

const isSameUnit = (literal: string, unit: string) => literal === unit;

/**
 * A text glob as tokens of UTF-16 code units: each character of `wildcards` is its wildcard, and
 * a backslash before one makes it the character itself, as in the shell (a card's "always allow"
 * escapes them, so a star in the approved call stays a star).
 */
export function textGlob(
  text: string,
  wildcards: Readonly<Record<string, typeof ANY_RUN | typeof ANY_ONE>>,
): GlobToken<string>[] {
  const tokens: GlobToken<string>[] = [];
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charAt(index);
    const next = text.charAt(index + 1);
    if (unit === "\\" && next !== "" && wildcards[next] !== undefined) {
      tokens.push(next);
      index += 1;
    } else {
      tokens.push(wildcards[unit] ?? unit);
    }
  }
  return tokens;
}

/** Whether the text glob's tokens match all of `text`, unit by unit. */
export function matchesText(tokens: readonly GlobToken<string>[], text: string): boolean {
  return matchesGlob(tokens, text, isSameUnit);
}
