import type { SelectHTMLAttributes } from "react";
import { LabelledField } from "./labelled-field";

/** A select with a visible label and an optional hint read out with it. */
export function SelectField({
  label,
  hint,
  className = "",
  children,
  ...props
}: SelectHTMLAttributes<HTMLSelectElement> & { label: string; hint?: string }) {
  return (
    <LabelledField label={label} hint={hint} className={className}>
      {({ id, describedBy }) => (
        <select
          id={id}
          aria-describedby={describedBy}
          className="mt-1 block w-full rounded-md border-0 bg-white py-2 pr-8 pl-3 text-slate-900 shadow-sm ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-indigo-600 focus:ring-inset sm:text-sm"
          {...props}
        >
          {children}
        </select>
      )}
    </LabelledField>
  );
}
