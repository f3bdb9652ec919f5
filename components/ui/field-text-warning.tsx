import { hasDisplayWarning, inspectText } from "@/lib/shared/display/visible-text";
import { TextWarnings, VisibleText } from "./visible-text";

/** Whether a field's text would read as something it is not (hidden, look-alike, right-to-left). */
function needsFieldTextWarning(text: string | undefined): text is string {
  return text !== undefined && hasDisplayWarning(inspectText(text));
}

/** A field's `aria-describedby`: its other descriptions, then the warning when it shows. */
export function describedByWithWarning(
  text: string | undefined,
  warningId: string,
  ...others: (string | undefined)[]
): string | undefined {
  const ids = [...others, needsFieldTextWarning(text) ? warningId : undefined];
  return ids.filter((id) => id !== undefined).join(" ") || undefined;
}

/**
 * Under a field whose text would not read as what it is: a field shows its value raw, and a value
 * may be an agent's (a respawn's role and prompt, a call to edit before approving). The card's
 * warnings, then the text as a card shows it.
 */
export function FieldTextWarning({ id, text }: { id: string; text: string | undefined }) {
  if (!needsFieldTextWarning(text)) return null;
  return (
    <div id={id} className="mt-1 space-y-1">
      <TextWarnings flags={inspectText(text)} />
      <p className="text-xs text-slate-700">
        It reads: <VisibleText text={text} variant="code" />
      </p>
    </div>
  );
}
