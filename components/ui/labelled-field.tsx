import { useId, type ReactNode } from "react";

/**
 * The frame every form control shares: a visible label tied to the control, and an optional hint
 * the control announces with it. `children` renders the control with the ids it must carry.
 */
export function LabelledField({
  label,
  hint,
  className = "",
  children,
}: {
  label: string;
  hint?: string | undefined;
  className?: string;
  children: (ids: { id: string; describedBy: string | undefined }) => ReactNode;
}) {
  const id = useId();
  const hintId = useId();
  return (
    <div className={className}>
      <label htmlFor={id} className="block text-sm font-medium text-slate-700">
        {label}
      </label>
      {children({ id, describedBy: hint ? hintId : undefined })}
      {hint && (
        <p id={hintId} className="mt-1 text-xs text-slate-500">
          {hint}
        </p>
      )}
    </div>
  );
}
