import type { ComponentProps } from "react";
import { LabelledField } from "./labelled-field";

/** An input that always carries a visible label, so people and tests can find it by name. */
export function TextField({
  label,
  className = "",
  ...props
}: ComponentProps<"input"> & { label: string }) {
  return (
    <LabelledField label={label} className={className}>
      {({ id }) => (
        <input
          id={id}
          className="mt-1 block w-full rounded-md border-0 px-3 py-2 text-slate-900 shadow-sm ring-1 ring-slate-300 ring-inset placeholder:text-slate-400 focus:ring-2 focus:ring-indigo-600 focus:ring-inset sm:text-sm"
          {...props}
        />
      )}
    </LabelledField>
  );
}
