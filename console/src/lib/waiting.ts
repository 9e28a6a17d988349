/**
 * The conversations waiting for a person (status `handoff`) of the organization acted on, watched
 * for as long as someone is signed in: their count in the navigation's Inbox entry and in the
 * browser tab's title, and an alert (attention.ts) when a conversation starts waiting. The Inbox
 * reports what its own list loaded, so both always say the same.
 */
import { computed, signal } from "@preact/signals";
import { api, must, type paths } from "../api/client.ts";
import { contactLabel } from "../pages/conversation-vocabulary.ts";
import { alertPerson } from "./attention.ts";
import { navigate } from "./router.ts";
import { organizationId as actedOn } from "./workspace.ts";

export type WaitingConversation =
  paths["/manage/conversations"]["get"]["responses"][200]["content"]["application/json"]["conversations"][number];

/** One page, the API's largest; past that the count says "100+". */
export const WAITING_SHOWN = 100;
/**
 * How often the watcher looks. It keeps looking while the tab is hidden (a person working in
 * another tab is who the alert is for); browsers slow such timers down to once a minute at most.
 */
const WATCH_MS = 10_000;

interface Waiting {
  organizationId: string;
  ids: Set<string>;
  more: boolean;
  /** When the look that found these began (a slower, older look never overwrites a newer one). */
  lookedAt: number;
}

const waiting = signal<Waiting | null>(null);

/** "3", "100+", or "" before the first look. */
export const waitingCount = computed(() => {
  const found = waiting.value;
  return found ? `${found.ids.size}${found.more ? "+" : ""}` : "";
});
export const someoneWaits = computed(() => (waiting.value?.ids.size ?? 0) > 0);

/**
 * The waiting conversations as just loaded. A conversation that was not waiting at the previous
 * look alerts the person; the first look after signing in or switching organization only counts.
 */
function report(
  organizationId: string,
  lookedAt: number,
  conversations: WaitingConversation[],
  more: boolean,
): void {
  if (organizationId !== actedOn.value) return;
  const previous = waiting.value?.organizationId === organizationId ? waiting.value : null;
  if (previous && previous.lookedAt > lookedAt) return;
  const ids = new Set(conversations.map((conversation) => conversation.conversation_id));
  waiting.value = { organizationId, ids, more, lookedAt };
  if (!previous) return;
  const started = conversations.filter((conversation) => !previous.ids.has(conversation.conversation_id));
  const first = started[0];
  if (!first) return;
  alertPerson({
    title:
      started.length === 1
        ? "A visitor is waiting for a person"
        : `${started.length} visitors are waiting for a person`,
    body: started.map(contactLabel).join(", "),
    tag: `waiting-${first.conversation_id}`,
    open: () => navigate(`/inbox?conversation=${first.conversation_id}`),
  });
}

/** Loads the waiting conversations (the watcher, the Inbox's list) and counts them. */
export async function loadWaiting(
  organizationId: string,
): Promise<{ conversations: WaitingConversation[]; more: boolean }> {
  const lookedAt = performance.now();
  const page = await must(
    api.GET("/manage/conversations", { params: { query: { status: "handoff", limit: WAITING_SHOWN } } }),
  );
  report(organizationId, lookedAt, page.conversations, page.has_more);
  return { conversations: page.conversations, more: page.has_more };
}

/** Watches the organization's waiting conversations until the returned function is called. */
export function watchWaiting(organizationId: string): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const look = async () => {
    try {
      if (!stopped) await loadWaiting(organizationId);
    } catch {
      // The count stays as last seen; the next look tries again.
    }
    if (!stopped) timer = setTimeout(look, WATCH_MS);
  };
  void look();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
