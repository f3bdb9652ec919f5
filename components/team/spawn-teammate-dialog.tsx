"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { queryKeys } from "@/components/realtime/query-keys";
import { Button } from "@/components/ui/button";
import { CheckboxField } from "@/components/ui/checkbox-field";
import { Dialog } from "@/components/ui/dialog";
import { ErrorAlert } from "@/components/ui/error-alert";
import { SelectField } from "@/components/ui/select-field";
import { TextAreaField } from "@/components/ui/text-area-field";
import { TextField } from "@/components/ui/text-field";
import type { WorkerConfig } from "@/lib/shared/agents/schema";
import type { WorkerScriptOption } from "@/lib/agents/worker-scripts";
import { apiFetch } from "@/lib/shared/http/api-fetch";

export type SpawnDefaults = {
  name: string;
  role: string;
  prompt: string;
  requirePlan: boolean;
  worker: WorkerConfig | null;
};

const MODEL_OPTIONS: { value: WorkerConfig["model"]; label: string }[] = [
  { value: "scripted", label: "Scripted (no LLM)" },
  { value: "anthropic", label: "Anthropic (Claude)" },
];

/** Registers an agent with a worker config; the supervisor starts its process. */
export function SpawnTeammateDialog({
  scripts,
  defaults,
  onClose,
}: {
  scripts: WorkerScriptOption[];
  /** Set when respawning an agent that ended: same name, a new incarnation. */
  defaults?: SpawnDefaults;
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(defaults?.name ?? "");
  const [role, setRole] = useState(defaults?.role ?? "");
  const [prompt, setPrompt] = useState(defaults?.prompt ?? "");
  const [requirePlan, setRequirePlan] = useState(defaults?.requirePlan ?? false);
  const [model, setModel] = useState<WorkerConfig["model"]>(defaults?.worker?.model ?? "scripted");
  const [script, setScript] = useState(defaults?.worker?.script ?? scripts[0]?.name ?? "");
  const selectedScript = scripts.find((option) => option.name === script);

  const spawn = useMutation({
    mutationFn: () =>
      apiFetch("/agents", {
        body: {
          name: name.trim(),
          role: role.trim(),
          ...(prompt.trim() ? { prompt: prompt.trim() } : {}),
          requirePlan,
          worker: model === "scripted" ? { model, script } : { model },
        },
      }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.agents });
      onClose();
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    spawn.mutate();
  }

  return (
    <Dialog
      title={defaults ? `Respawn ${defaults.name}` : "Spawn a teammate"}
      description="The supervisor starts a worker process for it; it appears on the board at once."
      onClose={onClose}
    >
      <form onSubmit={submit} className="space-y-4">
        <div className="grid gap-4 sm:grid-cols-2">
          <TextField
            label="Name"
            required
            maxLength={40}
            autoComplete="off"
            spellCheck={false}
            readOnly={Boolean(defaults)}
            value={name}
            onChange={(event) => setName(event.target.value)}
            placeholder="e.g. alice"
          />
          <TextField
            label="Role"
            required
            maxLength={100}
            value={role}
            onChange={(event) => setRole(event.target.value)}
            placeholder="e.g. backend developer"
          />
        </div>
        <TextAreaField
          label="Prompt"
          hint="Optional: what it should work on. Scripted workers follow their script instead."
          maxLength={20_000}
          value={prompt}
          onChange={(event) => setPrompt(event.target.value)}
        />
        <CheckboxField
          label="Require plan"
          hint="It must submit a plan and get your approval before any mutating tool runs."
          checked={requirePlan}
          onChange={(event) => setRequirePlan(event.target.checked)}
        />
        <div className="grid items-start gap-4 sm:grid-cols-2">
          <SelectField
            label="Model"
            value={model}
            onChange={(event) => setModel(event.target.value as WorkerConfig["model"])}
          >
            {MODEL_OPTIONS.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </SelectField>
          {model === "scripted" && (
            <SelectField
              label="Script"
              hint={selectedScript?.description ?? undefined}
              required
              value={script}
              onChange={(event) => setScript(event.target.value)}
            >
              {scripts.map((option) => (
                <option key={option.name} value={option.name}>
                  {option.name}
                </option>
              ))}
            </SelectField>
          )}
        </div>
        <ErrorAlert message={spawn.error?.message ?? null} />
        <div className="flex flex-wrap justify-end gap-2">
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" disabled={spawn.isPending}>
            {spawn.isPending ? "Spawning…" : defaults ? "Respawn" : "Spawn"}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
