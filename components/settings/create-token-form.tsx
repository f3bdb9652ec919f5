"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { queryKeys } from "@/components/realtime/query-keys";
import { useSessionUser } from "@/components/session/session-context";
import { Button } from "@/components/ui/button";
import { ErrorAlert } from "@/components/ui/error-alert";
import { SelectField } from "@/components/ui/select-field";
import { TextField } from "@/components/ui/text-field";
import { scopesForRole, type TokenScope } from "@/lib/shared/auth/scopes";
import { apiFetch } from "@/lib/shared/http/api-fetch";
import type { IssuedToken } from "@/lib/tokens/views";
import { SCOPE_DESCRIPTIONS } from "./scope-text";

/** The secret of a token just created: shown here once, never again. */
function NewTokenSecret({ issued, onDone }: { issued: IssuedToken; onDone: () => void }) {
  const [isCopied, setIsCopied] = useState(false);
  return (
    <div
      role="region"
      aria-label="New token"
      className="space-y-3 rounded-lg bg-emerald-50 p-4 ring-1 ring-emerald-600/20"
    >
      <p className="text-sm text-emerald-900">
        Token <strong>{issued.name}</strong> ({issued.scope}) created. Copy it now: it is shown only
        once.
      </p>
      <div className="flex flex-wrap items-end gap-2">
        <TextField
          label="Token secret"
          value={issued.token}
          readOnly
          onFocus={(event) => event.currentTarget.select()}
          className="min-w-0 flex-1 font-mono"
        />
        <Button
          variant="secondary"
          onClick={() => {
            void navigator.clipboard
              .writeText(issued.token)
              .then(() => setIsCopied(true))
              .catch(() => setIsCopied(false));
          }}
        >
          {isCopied ? "Copied" : "Copy"}
        </Button>
        <Button variant="ghost" onClick={onDone}>
          Done
        </Button>
      </div>
    </div>
  );
}

export function CreateTokenForm() {
  const user = useSessionUser();
  const queryClient = useQueryClient();
  const scopes = scopesForRole(user.role);
  const [name, setName] = useState("");
  const [scope, setScope] = useState<TokenScope>(scopes.includes("read") ? "read" : scopes[0]!);
  const [issued, setIssued] = useState<IssuedToken | null>(null);

  const create = useMutation({
    mutationFn: () => apiFetch<IssuedToken>("/tokens", { body: { name: name.trim(), scope } }),
    onSuccess: (token) => {
      setIssued(token);
      setName("");
      void queryClient.invalidateQueries({ queryKey: queryKeys.tokens });
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    setIssued(null);
    create.mutate();
  }

  return (
    <section aria-labelledby="create-token-heading" className="space-y-4">
      <h2 id="create-token-heading" className="text-base font-semibold">
        Create a token
      </h2>
      <form onSubmit={submit} className="flex flex-wrap items-end gap-3">
        <TextField
          label="Name"
          value={name}
          onChange={(event) => setName(event.target.value)}
          required
          maxLength={100}
          placeholder="ci-bot"
          hint={name.trim() ? undefined : "Name it to create it (what will use it)"}
          className="w-56"
        />
        <SelectField
          label="Scope"
          value={scope}
          onChange={(event) => setScope(event.target.value as TokenScope)}
          hint={SCOPE_DESCRIPTIONS[scope]}
          className="w-72"
        >
          {scopes.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </SelectField>
        <Button type="submit" disabled={create.isPending || !name.trim()}>
          {create.isPending ? "Creating…" : "Create token"}
        </Button>
      </form>
      <ErrorAlert message={create.error?.message ?? null} />
      {issued && <NewTokenSecret issued={issued} onDone={() => setIssued(null)} />}
    </section>
  );
}
