import type { TextareaHTMLAttributes } from "react";
import { LabelledField } from "./labelled-field";

/** A multi-line input with a visible label and an optional hint read out with it. */
export function TextAreaField({
  label,
  hint,
  className = "",
  ...props
}: TextareaHTMLAttributes<HTMLTextAreaElement> & { label: string; hint?: string }) {
  return (
    <LabelledField
      label={label}
      hint={hint}
      text={typeof props.value === "string" ? props.value : undefined}
      className={className}
    >
      {({ id, describedBy }) => (
        <textarea
          id={id}
          rows={3}
          aria-describedby={describedBy}
          className="mt-1 block w-full rounded-md border-0 px-3 py-2 text-slate-900 shadow-sm ring-1 ring-slate-300 ring-inset placeholder:text-slate-400 focus:ring-2 focus:ring-indigo-600 focus:ring-inset sm:text-sm"
          {...props}
        />
      )}
    </LabelledField>
  );
}
