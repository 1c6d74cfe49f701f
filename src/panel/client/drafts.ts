// Drafts in IndexedDB, one per agent and conversation: they survive a
// reload, a crash or a server restart, and never follow the agent to
// another conversation (the key names both).
import { run } from "./idb.ts";

export function draftKey(agentId: string, conversationId: string): string {
  return `${agentId}:${conversationId}`;
}

export async function loadDraft(key: string): Promise<string> {
  return (await run<string | undefined>(
    "drafts",
    "readonly",
    (s) => s.get(key),
  )) ?? "";
}

export async function saveDraft(key: string, text: string): Promise<void> {
  await run(
    "drafts",
    "readwrite",
    (s) => text ? s.put(text, key) : s.delete(key),
  );
}
