import type { Nodes, Paragraph, Parents, Root, RootContent, Table, TableCell } from "mdast";

/** Containers whose children are blocks: text put there needs a paragraph of its own. */
const BLOCK_CONTAINERS = new Set(["root", "blockquote", "listItem", "footnoteDefinition"]);

type Source = { value?: unknown };

function sourceOf(node: Nodes, file: Source): string {
  const start = node.position?.start.offset;
  const end = node.position?.end.offset;
  if (typeof file.value !== "string" || start === undefined || end === undefined) return "";
  return file.value.slice(start, end);
}

function paragraph(value: string): Paragraph {
  return { type: "paragraph", children: [{ type: "text", value }] };
}

function footnoteReferences(node: Nodes, found: Set<string>): Set<string> {
  if (node.type === "footnoteReference") found.add(node.identifier);
  if ("children" in node) for (const child of node.children) footnoteReferences(child, found);
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

/** What a node becomes so the Lead reads it; null when it shows as it is. */
function shown(
  node: RootContent,
  parent: Parents,
  file: Source,
  referenced: Set<string>,
): RootContent[] | null {
  const isBlock = BLOCK_CONTAINERS.has(parent.type);
  switch (node.type) {
    case "html":
      return [isBlock ? paragraph(node.value) : { type: "text", value: node.value }];
    case "definition":
      // Kept as well: the links that cite it are resolved from it.
      return [paragraph(sourceOf(node, file)), node];
    case "footnoteDefinition":
      return referenced.has(node.identifier) ? null : [paragraph(sourceOf(node, file))];
    case "code":
      return node.meta
        ? [
            {
              type: "paragraph",
              children: [{ type: "inlineCode", value: `\`\`\`${node.lang ?? ""} ${node.meta}` }],
            },
            node,
          ]
        : null;
    case "link":
    case "image":
      return node.title ? [node, { type: "text", value: ` (title: "${node.title}")` }] : null;
    default:
      return null;
  }
}

function reveal(parent: Parents, file: Source, referenced: Set<string>): void {
  if (parent.type === "table") widenTable(parent);
  parent.children = (parent.children as RootContent[]).flatMap((child) => {
    const replacement = shown(child, parent, file, referenced) ?? [child];
    for (const node of replacement) if ("children" in node) reveal(node, file, referenced);
    return replacement;
  }) as typeof parent.children;
}

/**
 * Markdown drops some of what it is given: raw HTML (never rendered here), link definitions,
 * footnotes nobody cites, table cells past the header's width, a code fence's words after its
 * language, link titles (shown on hover only). An agent can hide a step of its plan in any of
 * them, so each is shown as the text it was.
 */
export function remarkShowHiddenSource() {
  return (tree: Root, file: Source) => reveal(tree, file, footnoteReferences(tree, new Set()));
}
