import type { ComponentProps } from "react";
import { LabelledField } from "./labelled-field";

/**
 * An input that always carries a visible label, so people and tests can find it by name, and an
 * optional hint read out with it.
 */
export function TextField({
  label,
  hint,
  className = "",
  ...props
}: ComponentProps<"input"> & { label: string; hint?: string | undefined }) {
  return (
    <LabelledField
      label={label}
      hint={hint}
      // A password is never shown, not even escaped.
      text={props.type !== "password" && typeof props.value === "string" ? props.value : undefined}
      className={className}
    >
      {({ id, describedBy }) => (
        <input
          id={id}
          aria-describedby={describedBy}
          className="mt-1 block w-full rounded-md border-0 px-3 py-2 text-slate-900 shadow-sm ring-1 ring-slate-300 ring-inset placeholder:text-slate-400 focus:ring-2 focus:ring-indigo-600 focus:ring-inset sm:text-sm"
          {...props}
        />
      )}
    </LabelledField>
  );
}
