"use client";

import type { Element, ElementContent, Root, RootContent } from "hast";
import type { ReactNode } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import rehypeSanitize from "rehype-sanitize";
import remarkGfm from "remark-gfm";
import { renderVisibleText } from "@/lib/shared/display/visible-text";
import { remarkShowHiddenSource } from "./markdown-hidden-source";
import { describeSegment, segmentClassName, VisibleText } from "./visible-text";

/** A text node's segments as hast: plain text stays text, every escape becomes a marked span. */
function toVisibleNodes(value: string): ElementContent[] {
  // Never collapsed: a plan is read whole, and a collapse per text node would hide mid-sentence.
  const { segments } = renderVisibleText(value, { maxCharacters: Infinity, maxLines: Infinity });
  return segments.flatMap((segment): ElementContent[] => {
    if (segment.kind === "text") return [{ type: "text", value: segment.text }];
    if (segment.kind === "collapsed") return [];
    return [
      {
        type: "element",
        tagName: "span",
        properties: {
          dataSegment: segment.kind,
          className: segmentClassName(segment.kind).split(" "),
          title: describeSegment(segment),
        },
        children: [{ type: "text", value: segment.text }],
      },
    ];
  });
}

function escapeTextNodes(node: Root | Element): void {
  node.children = node.children.flatMap((child: RootContent): RootContent[] => {
    if (child.type === "text") return toVisibleNodes(child.value);
    if (child.type === "element") escapeTextNodes(child);
    return [child];
  }) as typeof node.children;
}

/** Runs after the sanitizer, so the spans it adds are ours and nothing the agent wrote. */
function rehypeVisibleText() {
  return (tree: Root) => escapeTextNodes(tree);
}

function textOf(children: ReactNode): string {
  if (typeof children === "string" || typeof children === "number") return String(children);
  if (Array.isArray(children)) return children.map(textOf).join("");
  return "";
}

/**
 * An image in agent-written markdown is never loaded: a remote image is a tracking pixel that
 * tells the agent's operator when the Lead reads the plan. It is shown as a link the Lead may
 * choose to follow (without a referrer), its target beside it like every link's.
 */
function ImageAsLink({ src, alt }: { src?: unknown; alt?: string }) {
  const label = `image: ${alt || "untitled"}`;
  if (typeof src !== "string" || src === "") return <VisibleText text={`[${label}]`} />;
  // The agent's words stay out of the link: a "show all" inside it would open the URL.
  return (
    <>
      <VisibleText text={`[${label}]`} />
      <span data-link-target className="text-slate-500">
        {" ("}
        <a href={src} rel="noopener noreferrer nofollow" target="_blank">
          open
        </a>
        {": "}
        <VisibleText text={src} variant="code" className="text-[0.85em]" />)
      </span>
    </>
  );
}

const components: Components = {
  // The agent's headings sit below the card's own title, an h2: `#` is an h3, `##` an h4 …
  h1: ({ node: _node, ...props }) => <h3 {...props} />,
  h2: ({ node: _node, ...props }) => <h4 {...props} />,
  h3: ({ node: _node, ...props }) => <h5 {...props} />,
  h4: ({ node: _node, ...props }) => <h6 {...props} />,
  h5: ({ node: _node, ...props }) => <h6 {...props} />,
  h6: ({ node: _node, ...props }) => <h6 {...props} />,
  img: ({ src, alt }) => <ImageAsLink src={src} alt={alt} />,
  // A link says where it goes: its text can claim anything, the target beside it cannot. Its
  // title is shown as text beside it (remarkShowHiddenSource): a tooltip would draw it raw.
  a: ({ href, children, node: _node, title: _title, ...props }) => {
    const isSelfDescribing = !href || textOf(children) === href;
    return (
      <>
        <a href={href} {...props}>
          {children}
        </a>
        {!isSelfDescribing && (
          <span data-link-target className="text-slate-500">
            {" ("}
            <VisibleText text={href} variant="code" className="text-[0.85em]" />)
          </span>
        )}
      </>
    );
  },
};

/**
 * Agent-written markdown. Raw HTML is never rendered (it is shown as text) and the output passes
 * through a sanitizer, so a plan cannot smuggle scripts, event handlers or javascript: links into
 * the Lead's browser; what markdown would drop is shown as written; images become links, hidden
 * characters in its text are shown as escapes, and links show their real target.
 */
export function Markdown({ source }: { source: string }) {
  return (
    <div className="prose-handshake text-sm leading-6 text-slate-800">
      <ReactMarkdown
        remarkPlugins={[remarkGfm, remarkShowHiddenSource]}
        rehypePlugins={[rehypeSanitize, rehypeVisibleText]}
        components={components}
      >
        {source}
      </ReactMarkdown>
    </div>
  );
}
