"use client";

import { VisibleText } from "@/components/ui/visible-text";
import type { RequestView } from "@/lib/requests/views";

/**
 * The agent asks for what the Lead already refused (the same call, or the same plan normalised):
 * the earlier feedback beside it, so the Lead need not decide the same thing twice from memory.
 * `isCompact` in a list item, which is a button: one line, nothing to click.
 */
export function AskedAgain({
  request,
  isCompact = false,
}: {
  request: RequestView;
  isCompact?: boolean;
}) {
  const earlier = request.askedAgainAfter;
  if (!earlier) return null;
  if (isCompact) {
    return (
      <span className="block text-xs text-rose-800">
        <span className="font-semibold">Asked again after rejection</span>
        {earlier.feedback && (
          <>
            {": “"}
            <VisibleText
              text={earlier.feedback}
              maxCharacters={80}
              maxLines={1}
              canExpand={false}
            />
            ”
          </>
        )}
      </span>
    );
  }
  return (
    <div className="rounded-lg bg-rose-50 px-4 py-3 text-sm text-rose-900">
      <p className="font-semibold">Asked again after rejection</p>
      <p>
        You rejected the same request ({earlier.requestId})
        {earlier.feedback ? (
          <>
            {" with: “"}
            <VisibleText text={earlier.feedback} />”
          </>
        ) : (
          "."
        )}
      </p>
    </div>
  );
}
