"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { queryKeys } from "@/components/realtime/query-keys";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { ErrorAlert } from "@/components/ui/error-alert";
import { apiFetch } from "@/lib/shared/http/api-fetch";
import type { TokenView } from "@/lib/tokens/views";

export function RevokeTokenDialog({ token, onClose }: { token: TokenView; onClose: () => void }) {
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => apiFetch<TokenView>(`/tokens/${token.id}`, { method: "DELETE" }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.tokens });
      onClose();
    },
  });
  return (
    <Dialog
      title={`Revoke token '${token.name}'?`}
      description="Anything using it gets 401 on its next call. This cannot be undone."
      onClose={onClose}
    >
      <ErrorAlert message={revoke.error?.message ?? null} className="mb-4" />
      <div className="flex justify-end gap-2">
        <Button variant="secondary" onClick={onClose}>
          Cancel
        </Button>
        <Button variant="danger" disabled={revoke.isPending} onClick={() => revoke.mutate()}>
          {revoke.isPending ? "Revoking…" : "Revoke"}
        </Button>
      </div>
    </Dialog>
  );
}
