import { VisibleText } from "@/components/ui/visible-text";
import type { RuleScope } from "@/lib/shared/api/rule";
import { toVisibleString } from "@/lib/shared/display/visible-text";

// A role and a session's directory are the agent's own text (a connected session names both),
// shown as a card shows such text.
const MAX_SHOWN_CHARACTERS = 200;

function shown(text: string): string {
  return toVisibleString(text, { maxCharacters: MAX_SHOWN_CHARACTERS });
}

/** A rule's scope in words, for a label: hidden characters in the agent's text are escaped. */
export function describeScope(scope: RuleScope): string {
  switch (scope.kind) {
    case "agent":
      return `agent ${scope.agent}`;
    case "role":
      return `${shown(scope.role)}s`;
    case "token":
      return `sessions of token ${scope.tokenId.slice(0, 8)}`;
    case "project":
      return `project ${shown(scope.cwd)}`;
    case "everyone":
      return "everyone";
    default: {
      const unreachable: never = scope;
      return String(unreachable);
    }
  }
}

/** A rule's scope as the page shows it, the agent's text marked as a card marks it. */
export function ScopeText({ scope }: { scope: RuleScope }) {
  switch (scope.kind) {
    case "role":
      return (
        <>
          <VisibleText text={scope.role} maxCharacters={MAX_SHOWN_CHARACTERS} canExpand={false} />s
        </>
      );
    case "project":
      return (
        <>
          project{" "}
          <VisibleText text={scope.cwd} maxCharacters={MAX_SHOWN_CHARACTERS} canExpand={false} />
        </>
      );
    default:
      return describeScope(scope);
  }
}
