import { useId, type ReactNode } from "react";
import { describedByWithWarning, FieldTextWarning } from "./field-text-warning";

/**
 * The frame every form control shares: a visible label tied to the control, and an optional hint
 * the control announces with it. `children` renders the control with the ids it must carry.
 * `text`, the control's value, is warned of as a card would warn of it.
 */
export function LabelledField({
  label,
  hint,
  text,
  className = "",
  children,
}: {
  label: string;
  hint?: string | undefined;
  text?: string | undefined;
  className?: string;
  children: (ids: { id: string; describedBy: string | undefined }) => ReactNode;
}) {
  const id = useId();
  const hintId = useId();
  const warningId = useId();
  const describedBy = describedByWithWarning(text, warningId, hint ? hintId : undefined);
  return (
    <div className={className}>
      <label htmlFor={id} className="block text-sm font-medium text-slate-700">
        {label}
      </label>
      {children({ id, describedBy })}
      {hint && (
        <p id={hintId} className="mt-1 text-xs text-slate-500">
          {hint}
        </p>
      )}
      <FieldTextWarning id={warningId} text={text} />
    </div>
  );
}
