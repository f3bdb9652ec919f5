/**
 * What the Lead reads must be what runs. Agent-controlled text is turned into segments in which
 * nothing is hidden by characters (bidi controls, zero-width and other invisible characters,
 * controls, stacked combining marks become visible escapes) or by layout (long whitespace runs
 * become a count, a very long value is collapsed in the middle so its first and last characters
 * stay visible). Pure and React-free, so every card, the markdown renderer and an editor share it.
 */

import { decodeString } from "micromark-util-decode-string";
import unhomoglyph from "unhomoglyph";

export type VisibleSegment =
  | { kind: "text"; text: string }
  /**
   * Letters that pass for Latin ones they are not: another script's inside a Latin word, a whole
   * word of them, or letters Unicode's confusables map to ASCII (`script` is then "Non-ASCII").
   */
  | { kind: "lookalike"; text: string; script: string }
  | { kind: "escape"; text: string; codePoint: number }
  | { kind: "whitespace"; text: string; count: number }
  | { kind: "marks"; text: string; count: number }
  /** The middle of a collapsed value; `text` is what the expand control says. */
  | { kind: "collapsed"; text: string; omitted: number; total: number };

export type VisibleTextFlags = {
  hasHiddenCharacters: boolean;
  hasLookalikes: boolean;
  hasStackedMarks: boolean;
  hasRightToLeftText: boolean;
};

export type VisibleText = VisibleTextFlags & {
  segments: VisibleSegment[];
  /** Characters (code points) in the original text. */
  length: number;
  isCollapsed: boolean;
};

export type VisibleTextOptions = {
  /** Display characters kept before collapsing; Infinity never collapses. */
  maxCharacters?: number;
  maxLines?: number;
};

export const DEFAULT_MAX_CHARACTERS = 600;
export const DEFAULT_MAX_LINES = 24;

/** Spaces in a row beyond this (mid-line) are shown as a count. */
const MAX_SPACE_RUN = 3;
/** Indentation is legitimate in plans and code, up to a point. */
const MAX_INDENT = 8;
/**
 * Empty lines in a row beyond this are shown as a count: code keeps two between its parts, and a
 * thousand push what follows them out of the box the Lead reads.
 */
const MAX_BLANK_LINES = 2;
/** Vietnamese and Hebrew stack two or three; more is an overlay trick. */
const MAX_STACKED_MARKS = 3;

const LATIN = /\p{Script=Latin}/u;
const LOOKALIKE_SCRIPTS = ["Cyrillic", "Greek", "Armenian", "Cherokee"] as const;
const LOOKALIKE_PATTERNS = LOOKALIKE_SCRIPTS.map(
  (script) => [script, new RegExp(`\\p{Script=${script}}`, "u")] as const,
);
/** What a look-alike of no script of those is called on the card. */
const NON_ASCII = "Non-ASCII";
/** Greek letters most fonts draw as Latin ones that Unicode's confusables do not list so. */
const GREEK_LATIN_LOOKALIKES = new Set("κτχ");
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const ASCII_LETTERS = /^[A-Za-z]+$/;
const ASCII_PRINTABLE = /^[\x21-\x7E]+$/;
const COMMON_SCRIPT = /\p{Script=Common}/u;
/**
 * Letterlike symbols and number forms (`K`, `ⅿ`, `Ⅱ`), halfwidth and fullwidth forms and the
 * mathematical alphanumerics: styled ASCII, which Unicode's compatibility form (NFKC) gives back.
 * The confusables data lacks many of them (fullwidth `ｍ`, `ｒ`, the digits).
 */
const STYLED_ASCII = /[\u2100-\u218F\uFF00-\uFFEF\u{1D400}-\u{1D7FF}]/u;
/**
 * What each printable ASCII character passes for by Unicode's confusables: `m` is `rn`, `"` is
 * `''`. A character with one of these skeletons is confusable with ASCII (TR39's definition).
 */
const ASCII_SKELETONS = new Set(
  Array.from({ length: 0x7e - 0x20 }, (_, index) => unhomoglyph(String.fromCharCode(0x21 + index))),
);
/** Letters a dot above is drawn on anyway: `i` + U+0307 shows as `i`. */
const SOFT_DOTTED = /\p{Soft_Dotted}/u;
const WORD = /[\p{L}\p{M}\p{N}]+/gu;
// What the blocks Unicode gives right-to-left by default hold (Hebrew to Arabic Extended, the
// presentation forms, plane 1's RTL ranges: Phoenician, Kharoshthi, Adlam …): letters, but also
// punctuation, digits and symbols that move their neighbours (a Hebrew maqaf, Arabic-Indic digits).
// Not marks, which take their base's direction, nor controls (the Arabic letter mark), escaped.
const RIGHT_TO_LEFT =
  /(?![\p{M}\p{C}])[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFC\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;

// Format characters (bidi controls, zero-width, soft hyphen, tags…), private use, unassigned,
// lone surrogates, line/paragraph separators, and spaces that are not U+0020.
const INVISIBLE = /[\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}\p{Zs}]/u;
// What Unicode says a renderer draws nothing for when it does not support it, whatever its
// category: Hangul fillers, the combining grapheme joiner, Khmer inherent vowels (marks after a
// letter), variation selectors, musical-notation format marks…
const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;
// Draws nothing yet is no default-ignorable: the blank braille pattern.
const BLANK_LETTERS = new Set([0x2800]);
const NONSPACING_MARK = /[\p{Mn}\p{Me}]/u;
const BASE_FOR_MARKS = /[\p{L}\p{N}]/u;
const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;
const KEYCAP_BASE = /[#*0-9]/;

/** A combining mark that draws something on its base (stacked, it is counted instead). */
function isDrawnMark(char: string): boolean {
  return NONSPACING_MARK.test(char) && !DEFAULT_IGNORABLE.test(char);
}

function isControl(codePoint: number): boolean {
  return codePoint < 0x20 || (codePoint >= 0x7f && codePoint <= 0x9f);
}

export function formatCodePoint(codePoint: number): string {
  return `⟨U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}⟩`;
}

/**
 * Emoji are built with joiners and variation selectors; those uses draw something, so they stay.
 * Everywhere else the same characters are invisible.
 */
function isEmojiGlue(chars: readonly string[], index: number): boolean {
  const codePoint = chars[index]?.codePointAt(0) ?? 0;
  const before = chars[index - 1] ?? "";
  if (codePoint === 0x200d) {
    const beforeBase = chars[index - 1] === "\ufe0f" ? (chars[index - 2] ?? "") : before;
    return PICTOGRAPHIC.test(beforeBase) && PICTOGRAPHIC.test(chars[index + 1] ?? "");
  }
  if (codePoint === 0xfe0f || codePoint === 0xfe0e) {
    // After a digit, `#` or `*` it draws something only as the start of a keycap.
    return PICTOGRAPHIC.test(before) || (KEYCAP_BASE.test(before) && chars[index + 1] === "\u20e3");
  }
  return false;
}

/**
 * The ASCII a letter or digit that is not ASCII passes for, by Unicode's confusables (TR39's data,
 * through unhomoglyph) or as styled ASCII: `ı` is `i`, `ɡ` `g`, `𝐦` `m`, `ｒ` `r`, `ʺ` `''`,
 * Cyrillic `а` `a`. A letter Unicode's data maps to two others counts only where Unicode also says
 * it is them (`ﬁ`, `ĳ`) or they are what an ASCII character passes for (`𑜀` is `rn`, as `m` is):
 * `æ` and `œ` are letters of their own in Danish and French. Null for anything else.
 */
function asciiLookalikeOf(char: string): string | null {
  if (char.charCodeAt(0) < 0x80 || !LETTER_OR_DIGIT.test(char)) return null;
  const compatible = char.normalize("NFKC");
  if (STYLED_ASCII.test(char) && ASCII_PRINTABLE.test(compatible)) return compatible;
  const skeleton = unhomoglyph(char);
  if (!ASCII_PRINTABLE.test(skeleton)) return null;
  return skeleton.length === 1 || compatible === skeleton || ASCII_SKELETONS.has(skeleton)
    ? skeleton
    : null;
}

/** Whether a letter passes for Latin letters: a word made only of these is a disguise. */
function passesForLatinLetters(char: string): boolean {
  return GREEK_LATIN_LOOKALIKES.has(char) || ASCII_LETTERS.test(asciiLookalikeOf(char) ?? "");
}

/**
 * Indices of letters that pass for Latin ones in a Latin-looking word: another script's inside a
 * Latin word (`сurl`), a word made only of look-alikes in a Latin text (or of mathematical and
 * other letters of no script of their own), and Latin letters that pass for ASCII ones (`gıt`).
 */
function findLookalikes(chars: readonly string[]): Map<number, string> {
  const found = new Map<number, string>();
  const text = chars.join("");
  const hasLatin = LATIN.test(text);
  // Code-unit offsets from the regex, mapped back to code-point indices.
  const unitToIndex = new Map<number, number>();
  let unit = 0;
  chars.forEach((char, index) => {
    unitToIndex.set(unit, index);
    unit += char.length;
  });
  for (const match of text.matchAll(WORD)) {
    const word = [...match[0]];
    const isMixed = LATIN.test(match[0]);
    const isAllLookalikes =
      (hasLatin || word.some((char) => COMMON_SCRIPT.test(char))) &&
      word.every((char) => passesForLatinLetters(char) || !/\p{L}/u.test(char));
    if (!isMixed && !isAllLookalikes) continue;
    let index = unitToIndex.get(match.index) ?? 0;
    for (const char of word) {
      const script = LOOKALIKE_PATTERNS.find(([, pattern]) => pattern.test(char))?.[0];
      if (script && (isMixed || passesForLatinLetters(char))) found.set(index, script);
      else if (!script && asciiLookalikeOf(char) !== null) found.set(index, NON_ASCII);
      index++;
    }
  }
  return found;
}

function spaces(count: number): string {
  return `⟨${count} ${count === 1 ? "space" : "spaces"}⟩`;
}

function emptyLines(count: number): string {
  return `⟨${count} empty lines⟩`;
}

/**
 * The lines from `start` (a line's first character) holding nothing but spaces and tabs, each
 * ended by a line break; `end` is where the first other line starts.
 */
function blankLinesAt(chars: readonly string[], start: number): { count: number; end: number } {
  let count = 0;
  let end = start;
  for (let at = start; at < chars.length; at++) {
    const char = chars[at];
    if (char === "\n") {
      count++;
      end = at + 1;
    } else if (char !== " " && char !== "\t") break;
  }
  return { count, end };
}

type Scan = VisibleTextFlags & { segments: VisibleSegment[] };

function scan(text: string): Scan {
  const chars = [...text];
  const lookalikes = findLookalikes(chars);
  const segments: VisibleSegment[] = [];
  const flags: VisibleTextFlags = {
    hasHiddenCharacters: false,
    hasLookalikes: lookalikes.size > 0,
    hasStackedMarks: false,
    hasRightToLeftText: RIGHT_TO_LEFT.test(text),
  };
  const pushText = (value: string) => {
    const last = segments.at(-1);
    if (last?.kind === "text") last.text += value;
    else segments.push({ kind: "text", text: value });
  };
  const escape = (codePoint: number) => {
    flags.hasHiddenCharacters = true;
    segments.push({ kind: "escape", text: formatCodePoint(codePoint), codePoint });
  };

  let index = 0;
  let isLineStart = true;
  while (index < chars.length) {
    const char = chars[index] as string;
    const codePoint = char.codePointAt(0) ?? 0;

    if (char === " ") {
      let end = index;
      while (chars[end] === " ") end++;
      const count = end - index;
      const limit = isLineStart ? MAX_INDENT : MAX_SPACE_RUN;
      if (count > limit) segments.push({ kind: "whitespace", text: spaces(count), count });
      else pushText(" ".repeat(count));
      index = end;
      isLineStart = false;
      continue;
    }
    if (char === "\n") {
      pushText("\n");
      index++;
      isLineStart = true;
      const blank = blankLinesAt(chars, index);
      if (blank.count > MAX_BLANK_LINES) {
        // The last of them ends as any line does, so what follows starts a line of its own.
        const last = blank.end - 1;
        segments.push({ kind: "whitespace", text: emptyLines(blank.count), count: last - index });
        index = last;
      }
      continue;
    }
    isLineStart = false;
    if (char === "\t") {
      // A tab's width depends on where it falls; it can line text up to look like something else.
      segments.push({ kind: "whitespace", text: "⟨tab⟩", count: 1 });
      index++;
      continue;
    }
    if (isDrawnMark(char)) {
      let end = index;
      while (end < chars.length && isDrawnMark(chars[end] as string)) {
        end++;
      }
      const count = end - index;
      const base = chars[index - 1] ?? "";
      if (count > MAX_STACKED_MARKS) {
        flags.hasStackedMarks = true;
        segments.push({ kind: "marks", text: `⟨${count} combining marks⟩`, count });
      } else if (!BASE_FOR_MARKS.test(base) && codePoint !== 0x20e3) {
        // A mark on punctuation or a space changes what the symbol looks like (`=` + U+0338 is ≠).
        for (let at = index; at < end; at++) escape(chars[at]?.codePointAt(0) ?? 0);
      } else if (SOFT_DOTTED.test(base) && chars.slice(index, end).includes("\u0307")) {
        // A dot above an `i` or a `j` draws nothing new: `gi̇t` reads as `git`.
        for (let at = index; at < end; at++) {
          const mark = chars[at] as string;
          if (mark === "\u0307") escape(0x0307);
          else pushText(mark);
        }
      } else {
        pushText(chars.slice(index, end).join(""));
      }
      index = end;
      continue;
    }
    const isHidden =
      isControl(codePoint) ||
      BLANK_LETTERS.has(codePoint) ||
      DEFAULT_IGNORABLE.test(char) ||
      INVISIBLE.test(char);
    if (isHidden && !isEmojiGlue(chars, index)) escape(codePoint);
    else if (lookalikes.has(index)) {
      const script = lookalikes.get(index) as string;
      const last = segments.at(-1);
      if (last?.kind === "lookalike" && last.script === script) last.text += char;
      else segments.push({ kind: "lookalike", text: char, script });
    } else pushText(char);
    index++;
  }
  return { ...flags, segments };
}

/** Whether the text needs a warning on its card, without building segments for display. */
export function inspectText(text: string): VisibleTextFlags {
  const { segments: _segments, ...flags } = scan(text);
  return flags;
}

/** Whether the text may not show as what it is: any flag set. */
export function hasDisplayWarning(flags: VisibleTextFlags): boolean {
  return (
    flags.hasHiddenCharacters ||
    flags.hasLookalikes ||
    flags.hasStackedMarks ||
    flags.hasRightToLeftText
  );
}

/** Flags of several texts together: a card warns if any of its texts needs it. */
export function combineFlags(all: readonly VisibleTextFlags[]): VisibleTextFlags {
  return {
    hasHiddenCharacters: all.some((flags) => flags.hasHiddenCharacters),
    hasLookalikes: all.some((flags) => flags.hasLookalikes),
    hasStackedMarks: all.some((flags) => flags.hasStackedMarks),
    hasRightToLeftText: all.some((flags) => flags.hasRightToLeftText),
  };
}

function lineBreaks(segment: VisibleSegment): number {
  return segment.kind === "text" ? segment.text.split("\n").length - 1 : 0;
}

/**
 * Keeps the segments up to `budget` display characters or `lines` line breaks from the start
 * (or, reversed, from the end), splitting a text segment between code points.
 */
function takeSegments(
  segments: readonly VisibleSegment[],
  budget: number,
  lines: number,
  fromEnd: boolean,
): { kept: VisibleSegment[]; keptLength: number } {
  const ordered = fromEnd ? [...segments].reverse() : segments;
  const kept: VisibleSegment[] = [];
  let used = 0;
  let breaks = 0;
  for (const segment of ordered) {
    if (segment.kind !== "text") {
      if (used + segment.text.length > budget) break;
      kept.push(segment);
      used += segment.text.length;
      continue;
    }
    const chars = fromEnd ? [...segment.text].reverse() : [...segment.text];
    const taken: string[] = [];
    for (const char of chars) {
      if (used >= budget || (char === "\n" && breaks >= lines)) break;
      if (char === "\n") breaks++;
      taken.push(char);
      used++;
    }
    if (taken.length > 0) {
      kept.push({ kind: "text", text: (fromEnd ? taken.reverse() : taken).join("") });
    }
    if (taken.length < chars.length) break;
  }
  return { kept: fromEnd ? kept.reverse() : kept, keptLength: used };
}

/** Characters of the original text that the segments stand for. */
function countCharacters(segments: readonly VisibleSegment[]): number {
  let sum = 0;
  for (const segment of segments) {
    switch (segment.kind) {
      case "text":
      case "lookalike":
        sum += [...segment.text].length;
        break;
      case "escape":
        sum += 1;
        break;
      case "whitespace":
      case "marks":
        sum += segment.count;
        break;
      case "collapsed":
        sum += segment.omitted;
        break;
      default: {
        const unreachable: never = segment;
        throw new Error(`unknown segment ${JSON.stringify(unreachable)}`);
      }
    }
  }
  return sum;
}

/** The text as it must be shown: every segment, flags for the card, collapsed if very long. */
export function renderVisibleText(text: string, options: VisibleTextOptions = {}): VisibleText {
  const maxCharacters = options.maxCharacters ?? DEFAULT_MAX_CHARACTERS;
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const { segments, ...flags } = scan(text);
  const length = [...text].length;
  const displayLength = segments.reduce((sum, segment) => sum + segment.text.length, 0);
  const lines = segments.reduce((sum, segment) => sum + lineBreaks(segment), 0) + 1;
  if (displayLength <= maxCharacters && lines <= maxLines) {
    return { ...flags, segments, length, isCollapsed: false };
  }
  // As much of the end as of the start: the tail is where a padded payload hides.
  const head = takeSegments(
    segments,
    Math.ceil(maxCharacters / 2),
    Math.ceil(maxLines / 2) - 1,
    false,
  );
  const tail = takeSegments(
    segments,
    maxCharacters - head.keptLength,
    Math.floor(maxLines / 2) - 1,
    true,
  );
  const omitted = length - countCharacters(head.kept) - countCharacters(tail.kept);
  const collapsed: VisibleSegment = {
    kind: "collapsed",
    text: `… show all ${length.toLocaleString("en-US")} characters …`,
    omitted,
    total: length,
  };
  return {
    ...flags,
    segments: [...head.kept, collapsed, ...tail.kept],
    length,
    isCollapsed: true,
  };
}

/** The segments as one string, exactly as a card shows them (tests and plain-text contexts). */
export function toDisplayString(visible: Pick<VisibleText, "segments">): string {
  return visible.segments.map((segment) => segment.text).join("");
}

/** Text where no markup can go (an `<option>`, a label): the escapes and counts as characters. */
export function toVisibleString(text: string, options: VisibleTextOptions = {}): string {
  return toDisplayString(renderVisibleText(text, options));
}

/**
 * Flags of markdown as it will read once rendered: a character reference (`&#x202E;`, `&rlm;`) or
 * a backslash escape is ASCII in the source and the character itself on the page, so the text is
 * judged both ways (micromark's own decoder).
 */
export function inspectMarkdown(source: string): VisibleTextFlags {
  return combineFlags([inspectText(source), inspectText(decodeString(source))]);
}

/**
 * Flags of every string in a JSON value, keys included (an agent names the keys too). Walks with
 * a stack rather than recursion: a deeply nested payload must not overflow it.
 */
export function inspectValue(value: unknown): VisibleTextFlags {
  const found: VisibleTextFlags[] = [];
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === "string") found.push(inspectText(item));
    else if (Array.isArray(item)) pending.push(...item);
    else if (item !== null && typeof item === "object") {
      for (const [key, child] of Object.entries(item)) {
        found.push(inspectText(key));
        pending.push(child);
      }
    }
  }
  return combineFlags(found);
}
