import type { ComponentProps } from "react";
import ReactMarkdown from "react-markdown";
import rehypeSanitize from "rehype-sanitize";
import remarkGfm from "remark-gfm";

/**
 * An image in agent-written markdown is never loaded: a remote image is a tracking pixel that
 * tells the agent's operator when the Lead reads the plan. It is shown as a link the Lead may
 * choose to follow (without a referrer).
 */
function ImageAsLink({ src, alt }: ComponentProps<"img">) {
  const label = `image: ${alt || (typeof src === "string" ? src : "") || "untitled"}`;
  if (typeof src !== "string" || src === "") return <span>[{label}]</span>;
  return (
    <a href={src} rel="noopener noreferrer nofollow" target="_blank">
      [{label}]
    </a>
  );
}

/**
 * Agent-written markdown. Raw HTML is never rendered and the output passes through a sanitizer,
 * so a plan cannot smuggle scripts, event handlers or javascript: links into the Lead's browser;
 * images become links.
 */
export function Markdown({ source }: { source: string }) {
  return (
    <div className="prose-handshake text-sm leading-6 text-slate-800">
      <ReactMarkdown
        remarkPlugins={[remarkGfm]}
        rehypePlugins={[rehypeSanitize]}
        components={{ img: ImageAsLink }}
      >
        {source}
      </ReactMarkdown>
    </div>
  );
}
