import type { Nodes, Paragraph, Parents, Root, RootContent, Table, TableCell } from "mdast";
import { defaultSchema } from "rehype-sanitize";

/** Containers whose children are blocks: text put there needs a paragraph of its own. */
const BLOCK_CONTAINERS = new Set(["root", "blockquote", "listItem", "footnoteDefinition"]);

type Source = { value?: unknown };

/** What the reading of one document has seen so far. */
type Reading = {
  file: Source;
  /** Footnotes cited from outside any footnote: only those are listed under the text. */
  cited: Set<string>;
  /** Footnotes defined so far: a second definition of one is never rendered. */
  defined: Set<string>;
};

function sourceOf(node: Nodes, file: Source): string {
  const start = node.position?.start.offset;
  const end = node.position?.end.offset;
  if (typeof file.value !== "string" || start === undefined || end === undefined) return "";
  return file.value.slice(start, end);
}

function paragraph(value: string): Paragraph {
  return { type: "paragraph", children: [{ type: "text", value }] };
}

function citedFootnotes(node: Nodes, found: Set<string>): Set<string> {
  if (node.type === "footnoteReference") found.add(node.identifier);
  // A footnote cited only from footnotes (itself, or another such) is never listed.
  if ("children" in node && node.type !== "footnoteDefinition") {
    for (const child of node.children) citedFootnotes(child, found);
  }
  return found;
}

/** A row with more cells than the header loses the rest when rendered: the header grows instead. */
function widenTable(table: Table): void {
  const width = Math.max(...table.children.map((row) => row.children.length));
  for (const row of table.children) {
    while (row.children.length < width) {
      row.children.push({ type: "tableCell", children: [] } satisfies TableCell);
    }
  }
  while (table.align && table.align.length < width) table.align.push(null);
}

/**
 * Whether the sanitizer keeps the URL, by its own rule (hast-util-sanitize's `safeProtocol`): no
 * colon before the first `/`, `?` or `#`, or what precedes it is one of the protocols it allows
 * for the attribute, letter for letter.
 */
function isKept(url: string, attribute: "href" | "src"): boolean {
  const colon = url.indexOf(":");
  const isRelative =
    colon < 0 || ["/", "?", "#"].some((mark) => url.includes(mark) && colon > url.indexOf(mark));
  if (isRelative) return true;
  return (defaultSchema.protocols?.[attribute] ?? []).includes(url.slice(0, colon));
}

/** A link's or image's words shown nowhere else: its title, a target the sanitizer drops. */
function unseenOfLink(node: { url: string; title?: string | null }, attribute: "href" | "src") {
  const parts = [
    ...(isKept(node.url, attribute) ? [] : [`target: ${node.url}`]),
    ...(node.title ? [`title: "${node.title}"`] : []),
  ];
  return parts.length > 0 ? ` (${parts.join("; ")})` : null;
}

/** What a node becomes so the Lead reads it; null when it shows as it is. */
function shown(node: RootContent, parent: Parents, reading: Reading): RootContent[] | null {
  const isBlock = BLOCK_CONTAINERS.has(parent.type);
  switch (node.type) {
    case "html":
      return [isBlock ? paragraph(node.value) : { type: "text", value: node.value }];
    case "definition":
      // Kept as well: the links that cite it are resolved from it.
      return [paragraph(sourceOf(node, reading.file)), node];
    case "footnoteDefinition": {
      const isListed = reading.cited.has(node.identifier) && !reading.defined.has(node.identifier);
      reading.defined.add(node.identifier);
      return isListed ? null : [paragraph(sourceOf(node, reading.file))];
    }
    case "code": {
      const info = [node.lang, node.meta].filter(Boolean).join(" ");
      return info
        ? [{ type: "paragraph", children: [{ type: "inlineCode", value: `\`\`\`${info}` }] }, node]
        : null;
    }
    case "link":
    case "image": {
      const unseen = unseenOfLink(node, node.type === "link" ? "href" : "src");
      return unseen ? [node, { type: "text", value: unseen }] : null;
    }
    default:
      return null;
  }
}

function reveal(parent: Parents, reading: Reading): void {
  if (parent.type === "table") widenTable(parent);
  parent.children = (parent.children as RootContent[]).flatMap((child) => {
    const replacement = shown(child, parent, reading) ?? [child];
    for (const node of replacement) if ("children" in node) reveal(node, reading);
    return replacement;
  }) as typeof parent.children;
}

/**
 * Markdown drops some of what it is given: raw HTML (never rendered here), link definitions,
 * footnotes nobody cites and a footnote's second definition, table cells past the header's width,
 * a code fence's info words, link titles (shown on hover only) and targets the sanitizer removes
 * (`javascript:`, `data:`). An agent can hide a step of its plan in any of them, so each is shown
 * as the text it was.
 */
export function remarkShowHiddenSource() {
  return (tree: Root, file: Source) =>
    reveal(tree, { file, cited: citedFootnotes(tree, new Set()), defined: new Set() });
}
