"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent, type ReactNode } from "react";
import { queryKeys } from "@/components/realtime/query-keys";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { ErrorAlert } from "@/components/ui/error-alert";
import { TextAreaField } from "@/components/ui/text-area-field";

export type ActionDialogProps = {
  title: string;
  description?: ReactNode;
  /** A free-text field sent with the action: a message, or an optional reason. */
  field?: { label: string; isRequired: boolean; placeholder?: string; hint?: string };
  confirmLabel: string;
  pendingLabel: string;
  variant?: "primary" | "danger";
  onConfirm: (text: string) => Promise<unknown>;
  onClose: () => void;
};

/** One Lead action behind a confirmation: shows the API's refusal in place and stays open on it. */
export function ActionDialog({
  title,
  description,
  field,
  confirmLabel,
  pendingLabel,
  variant = "primary",
  onConfirm,
  onClose,
}: ActionDialogProps) {
  const queryClient = useQueryClient();
  const [text, setText] = useState("");
  const action = useMutation({
    mutationFn: () => onConfirm(text.trim()),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.agents });
      onClose();
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    action.mutate();
  }

  return (
    <Dialog title={title} description={description} onClose={onClose}>
      <form onSubmit={submit} className="space-y-4">
        {field && (
          <TextAreaField
            label={field.label}
            hint={field.hint}
            placeholder={field.placeholder}
            required={field.isRequired}
            maxLength={16_000}
            value={text}
            onChange={(event) => setText(event.target.value)}
          />
        )}
        <ErrorAlert message={action.error?.message ?? null} />
        <div className="flex flex-wrap justify-end gap-2">
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" variant={variant} disabled={action.isPending}>
            {action.isPending ? pendingLabel : confirmLabel}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
