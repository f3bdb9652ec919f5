import type { Env } from "../../lib/env";
import { AnthropicModel } from "./anthropic-model";
import type { Model } from "./model";
import { loadScript, ScriptedModel } from "./scripted-model";

/** The model a worker runs, from its settings: scripted by default, Anthropic when configured. */
export function createModel(settings: Env): Model {
  if (settings.HANDSHAKE_MODEL === "anthropic") {
    if (!settings.ANTHROPIC_API_KEY)
      throw new Error("HANDSHAKE_MODEL=anthropic needs ANTHROPIC_API_KEY");
    return new AnthropicModel({
      apiKey: settings.ANTHROPIC_API_KEY,
      ...(settings.ANTHROPIC_BASE_URL ? { baseURL: settings.ANTHROPIC_BASE_URL } : {}),
      model: settings.ANTHROPIC_MODEL,
    });
  }
  if (!settings.HANDSHAKE_SCRIPT)
    throw new Error("HANDSHAKE_MODEL=scripted needs HANDSHAKE_SCRIPT (a file in agents/scripts)");
  return new ScriptedModel(loadScript(settings.HANDSHAKE_SCRIPT));
}
