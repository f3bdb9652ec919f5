import ReactMarkdown from "react-markdown";
import rehypeSanitize from "rehype-sanitize";
import remarkGfm from "remark-gfm";

/**
 * Agent-written markdown. Raw HTML is never rendered and the output passes through a sanitizer,
 * so a plan cannot smuggle scripts, event handlers or javascript: links into the Lead's browser.
 */
export function Markdown({ source }: { source: string }) {
  return (
    <div className="prose-handshake text-sm leading-6 text-slate-800">
      <ReactMarkdown remarkPlugins={[remarkGfm]} rehypePlugins={[rehypeSanitize]}>
        {source}
      </ReactMarkdown>
    </div>
  );
}
