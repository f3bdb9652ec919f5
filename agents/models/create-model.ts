import type { AgentEnv } from "../../lib/shared/env/agent-env";
import type { WorkerSecrets } from "../secrets-pipe";
import { AnthropicModel } from "./anthropic-model";
import type { Model } from "./model";
import { loadScript, ScriptedModel } from "./scripted-model";

/** The model a worker runs, from its settings: scripted by default, Anthropic when configured. */
export function createModel(
  settings: AgentEnv,
  secrets: Pick<WorkerSecrets, "anthropicApiKey">,
): Model {
  if (settings.HANDSHAKE_MODEL === "anthropic") {
    if (!secrets.anthropicApiKey)
      throw new Error("HANDSHAKE_MODEL=anthropic needs ANTHROPIC_API_KEY (given to npm start)");
    return new AnthropicModel({
      apiKey: secrets.anthropicApiKey,
      ...(settings.ANTHROPIC_BASE_URL ? { baseURL: settings.ANTHROPIC_BASE_URL } : {}),
      model: settings.ANTHROPIC_MODEL,
    });
  }
  if (!settings.HANDSHAKE_SCRIPT)
    throw new Error("HANDSHAKE_MODEL=scripted needs HANDSHAKE_SCRIPT (a file in agents/scripts)");
  return new ScriptedModel(loadScript(settings.HANDSHAKE_SCRIPT));
}
