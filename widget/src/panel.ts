/**
 * The chat panel, loaded the first time the visitor opens the widget (loader.ts keeps everything
 * before that small). It renders into the launcher's shadow root and speaks the API with the
 * visitor's token:
 *
 *   - history: the conversation the session names, read a page at a time (kept across reloads
 *     and tabs, since the session is);
 *   - a message: a conversation started if there is none, then the stream endpoint, its reply
 *     shown as it is written (a typing indicator until the first words), retried safely with the
 *     same Idempotency-Key; images from a file picker or pasted, as attachments;
 *   - handoff: a status line, and the person's replies polled with backoff (1 s growing to 4 s, so
 *     a reply shows within 5 s), paused while the page is hidden;
 *   - errors: a polite line with a retry; a token refused once is renewed and the request repeated;
 *   - access: a modal dialog with focus kept inside and returned to the launcher, Escape closes,
 *     new messages announced through the log's live region (a reply being written is `aria-busy`
 *     until it is complete, so it is read once).
 */
import { extensions, type ReplyMessage } from "./extensions.ts";
import type { MountPanel, Panel, PanelHost } from "./host.ts";
import { type PanelTexts, panelTexts } from "./panel-strings.ts";
import { panelCss } from "./panel-styles.ts";
import { adopt } from "./styles.ts";
import { h, icon } from "./ui.ts";

interface HistoryMessage {
  message_id: string;
  role: "user" | "assistant" | "agent" | "system";
  content: string;
  attachments?: { type: "image" }[];
  created_at: string;
  agent_name?: string;
  status_change?: { from: string; to: string; cause: string };
  sources?: ReplyMessage["sources"];
}

type Status = "open" | "handoff" | "closed";

interface PendingImage {
  data: string;
  media_type: string;
  bitmap: ImageBitmap;
}

const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const MAX_IMAGE_BYTES = 3_750_000;
const MAX_IMAGES = 4;
const POLL_FIRST_MS = 1_000;
const POLL_MAX_MS = 4_000;

class Refused extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`refused (${status})`);
  }
}

function newKey(): string {
  if (crypto.randomUUID) return crypto.randomUUID();
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// The sources a reply drew on, when the API sends them: links under the reply.
extensions.push({
  reply(bubble, message, host) {
    const linked = (message.sources ?? []).filter((source) => source.url?.startsWith("https://"));
    if (linked.length === 0) return;
    bubble.append(
      h(
        "ul",
        { class: "sources", "aria-label": panelTexts[host.language].sources },
        ...linked.map((source) =>
          h(
            "li",
            {},
            h(
              "a",
              { href: source.url ?? "", target: "_blank", rel: "noopener noreferrer" },
              source.title || (source.url ?? ""),
            ),
          ),
        ),
      ),
    );
  },
});

function thumbnail(bitmap: ImageBitmap, size: number): HTMLCanvasElement {
  // A canvas, not an <img> of a blob or data URL: the host page's img-src need not allow either.
  const canvas = h("canvas", { width: String(size * 2), height: String(size * 2), "aria-hidden": "true" });
  const scale = Math.max((size * 2) / bitmap.width, (size * 2) / bitmap.height);
  const width = bitmap.width * scale;
  const height = bitmap.height * scale;
  canvas.getContext("2d")?.drawImage(bitmap, (size * 2 - width) / 2, (size * 2 - height) / 2, width, height);
  return canvas;
}

export const mount: MountPanel = (host: PanelHost): Panel => {
  adopt(host.root, panelCss);
  let t: PanelTexts = panelTexts[host.language];

  // ---------- the DOM ----------
  const title = h("h2", { id: "cbw-title" });
  const closeButton = h("button", { type: "button", class: "icon" }, icon("M6 6l12 12M18 6L6 18", true));
  const status = h("p", { class: "status", role: "status" });
  const log = h("div", { class: "log", role: "log", tabindex: "0" });
  const typing = h("div", { class: "typing" }, h("i"), h("i"), h("i"));
  const starters = h("ul", { class: "starters" });
  const errorText = h("span");
  const retryButton = h("button", { type: "button" });
  const error = h("div", { class: "error", role: "alert" }, errorText, retryButton);
  const pending = h("div", { class: "pending" });
  const input = h("textarea", { id: "cbw-input", rows: "1" });
  const inputLabel = h("label", { class: "sr", for: "cbw-input" });
  // Not shown: the attach button opens it.
  const fileInput = h("input", { type: "file", accept: IMAGE_TYPES.join(","), multiple: "", hidden: "" });
  const attachButton = h(
    "button",
    { type: "button", class: "icon" },
    icon(
      "M16.5 6.5l-7.8 7.8a1.8 1.8 0 002.6 2.6l7.8-7.8a3.5 3.5 0 00-5-5L6.3 11.9a5.2 5.2 0 007.4 7.4l6.1-6.1",
      true,
    ),
  );
  const sendButton = h("button", { type: "submit", class: "icon send" }, icon("M3 20l18-8L3 4v6l12 2-12 2z"));
  const form = h("form", {}, pending, inputLabel, input, fileInput, attachButton, sendButton);
  const panel = h(
    "div",
    { class: "panel", role: "dialog", "aria-modal": "true", "aria-labelledby": "cbw-title", id: "cbw-panel" },
    h("header", {}, title, closeButton),
    status,
    log,
    starters,
    error,
    form,
  );
  if (host.preview) {
    // The console's preview sits in a page of its own: a region of it, not a modal dialog.
    panel.setAttribute("role", "region");
    panel.removeAttribute("aria-modal");
  }
  panel.hidden = true;
  status.hidden = true;
  error.hidden = true;
  typing.hidden = true;
  host.root.append(panel);

  // ---------- state ----------
  let conversationStatus: Status = "open";
  let known = new Set<string>();
  /** The cursor that starts the last page of history read (null: the first page). */
  let lastPage: string | null = null;
  let loadedFor: string | null | undefined;
  let images: PendingImage[] = [];
  let retry: (() => void) | undefined;
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  let pollDelay = POLL_FIRST_MS;
  let sending = false;

  function texts(): void {
    t = panelTexts[host.language];
    title.textContent = host.greeting.title;
    closeButton.setAttribute("aria-label", t.close);
    log.setAttribute("aria-label", t.conversation);
    starters.setAttribute("aria-label", t.starters);
    inputLabel.textContent = t.message;
    input.placeholder = t.placeholder;
    attachButton.setAttribute("aria-label", t.attach);
    sendButton.setAttribute("aria-label", t.send);
    retryButton.textContent = t.retry;
    typing.setAttribute("aria-label", t.typing);
  }

  function scrollDown(): void {
    log.scrollTop = log.scrollHeight;
  }

  function showError(text: string | undefined, again?: () => void): void {
    error.hidden = text === undefined;
    errorText.textContent = text ?? "";
    retry = again;
    retryButton.hidden = again === undefined;
  }

  function setStatus(next: Status, personAnswered = false): void {
    conversationStatus = next;
    status.hidden = next !== "handoff";
    status.textContent = personAnswered ? t.person : t.handoff;
    if (next === "handoff") schedulePoll(POLL_FIRST_MS);
    else stopPolling();
  }

  function note(text: string): void {
    log.insertBefore(h("p", { class: "note" }, text), typing);
    scrollDown();
  }

  function bubble(role: "user" | "assistant" | "agent", content: string, who?: string): HTMLElement {
    const element = h("div", { class: `msg ${role}` });
    if (who) element.append(h("span", { class: "who" }, who));
    else if (role === "user") element.append(h("span", { class: "sr" }, `${t.you}: `));
    element.append(h("span", { class: "text" }, content));
    log.insertBefore(element, typing);
    scrollDown();
    return element;
  }

  function reply(element: HTMLElement, message: ReplyMessage): void {
    for (const extension of extensions) extension.reply?.(element, message, host);
    host.emit("message", { role: "assistant", content: message.content });
  }

  /** The welcome message and (before the first message) the starter questions. */
  function greet(): void {
    log.replaceChildren(typing);
    bubble("assistant", host.greeting.welcome_message);
    starters.replaceChildren(
      ...host.greeting.starter_questions.map((question) => {
        const button = h("button", { type: "button" }, question);
        button.addEventListener("click", () => void send(question));
        return h("li", {}, button);
      }),
    );
    starters.hidden = host.greeting.starter_questions.length === 0;
  }

  function render(message: HistoryMessage): void {
    if (known.has(message.message_id)) return;
    known.add(message.message_id);
    starters.hidden = true;
    if (message.role === "system") {
      const to = message.status_change?.to;
      if (to === "open") note(t.handedBack);
      else if (to === "closed") {
        note(t.closed);
        const id = host.conversationId();
        if (id) for (const extension of extensions) extension.closed?.(log, id, host);
      }
      if (to === "open" || to === "handoff" || to === "closed") setStatus(to);
      return;
    }
    if (message.role === "user") {
      // A message this page sent and showed already: it gets its id now.
      const mine = log.querySelector<HTMLElement>(`.msg.user[data-pending="${CSS.escape(message.content)}"]`);
      if (mine) {
        mine.removeAttribute("data-pending");
        return;
      }
    }
    const element = bubble(
      message.role,
      message.content,
      message.role === "agent" ? message.agent_name || undefined : undefined,
    );
    if ((message.attachments ?? []).length > 0)
      element.append(...(message.attachments ?? []).map(() => h("span", { class: "chip" }, t.image)));
    if (message.role === "agent") {
      if (conversationStatus === "handoff") status.textContent = t.person;
      host.emit("message", { role: "agent", content: message.content });
    }
    if (message.role === "assistant") reply(element, message as ReplyMessage);
  }

  // ---------- the API ----------
  async function request(path: string, init: RequestInit = {}, renewed = false): Promise<Response> {
    const token = await host.token();
    const answer = await fetch(`${host.api}${path}`, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` },
    });
    if (answer.status === 401 && !renewed) {
      await host.token(true);
      return request(path, init, true);
    }
    return answer;
  }

  async function json<T>(path: string, init: RequestInit = {}): Promise<T> {
    const answer = await request(path, init);
    const body = await answer.json().catch(() => null);
    if (!answer.ok) throw new Refused(answer.status, body);
    return body as T;
  }

  /** Reads the history from the last page read on, rendering what is new. */
  async function catchUp(conversationId: string): Promise<void> {
    let cursor = lastPage;
    for (;;) {
      const page = await json<{ messages: HistoryMessage[]; has_more: boolean; next_cursor: string | null }>(
        `/api/conversation/${conversationId}/messages?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      // Reset, or another conversation begun, while this page was read: it no longer belongs here.
      if (host.conversationId() !== conversationId) return;
      for (const message of page.messages) render(message);
      if (!page.has_more || !page.next_cursor) break;
      cursor = page.next_cursor;
      lastPage = cursor;
    }
  }

  async function load(): Promise<void> {
    const conversationId = host.conversationId();
    if (loadedFor === conversationId) return;
    loadedFor = conversationId;
    known = new Set();
    lastPage = null;
    stopPolling();
    conversationStatus = "open";
    status.hidden = true;
    greet();
    if (!conversationId || host.preview) return;
    try {
      const [conversation] = await Promise.all([
        json<{ status: Status }>(`/api/conversation/${conversationId}`),
        catchUp(conversationId),
      ]);
      if (conversation.status === "closed") {
        // A new message starts a new conversation.
        host.setConversationId(null);
        loadedFor = null;
      }
      setStatus(conversation.status, log.querySelector(".agent") !== null);
    } catch (failure) {
      if (failure instanceof Refused && failure.status === 404) {
        host.setConversationId(null);
        loadedFor = null;
        return;
      }
      loadedFor = undefined;
      showError(t.unavailable, () => {
        showError(undefined);
        void load();
      });
    }
  }

  // ---------- handoff: polling with backoff, paused while hidden ----------
  function stopPolling(): void {
    clearTimeout(pollTimer);
    pollTimer = undefined;
  }

  function schedulePoll(delay: number): void {
    stopPolling();
    pollDelay = delay;
    if (panel.hidden || document.hidden || host.preview) return;
    pollTimer = setTimeout(() => void poll(), delay);
  }

  async function poll(): Promise<void> {
    const conversationId = host.conversationId();
    if (!conversationId || conversationStatus !== "handoff") return;
    const before = known.size;
    try {
      await catchUp(conversationId);
    } catch {
      // A missed poll is retried at the next one.
    }
    if (conversationStatus !== "handoff") return;
    schedulePoll(known.size > before ? POLL_FIRST_MS : Math.min(pollDelay * 1.5, POLL_MAX_MS));
  }

  document.addEventListener("visibilitychange", () => {
    if (document.hidden) stopPolling();
    else if (conversationStatus === "handoff") schedulePoll(0);
  });

  // ---------- sending ----------
  async function ensureConversation(): Promise<string> {
    const existing = host.conversationId();
    if (existing) return existing;
    const started = await json<{ conversation_id: string }>("/api/conversation", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ chatbot_id: host.chatbotId }),
    });
    host.setConversationId(started.conversation_id);
    loadedFor = started.conversation_id;
    return started.conversation_id;
  }

  async function stream(body: string, key: string): Promise<void> {
    const answer = await request("/api/message/stream", {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key },
      body,
    });
    if (!answer.ok || !answer.body) throw new Refused(answer.status, await answer.json().catch(() => null));
    const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let current: HTMLElement | undefined;
    let text: HTMLElement | undefined;
    let streamStatus: Status = conversationStatus;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let boundary = buffer.indexOf("\n\n");
      while (boundary !== -1) {
        const block = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        boundary = buffer.indexOf("\n\n");
        const event = /^event: ?(.*)$/m.exec(block)?.[1] ?? "message";
        const data = JSON.parse(
          block
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).replace(/^ /, ""))
            .join("\n") || "null",
        );
        if (event === "message.start") {
          streamStatus = data.status;
          if (data.message_id) {
            known.add(data.message_id);
            typing.hidden = false;
          }
        } else if (event === "message.delta") {
          if (!current) {
            performance.mark("chatbot-widget:first-token");
            typing.hidden = true;
            current = bubble("assistant", "");
            current.setAttribute("aria-busy", "true");
            text = current.querySelector<HTMLElement>(".text") ?? undefined;
          }
          if (text) text.textContent += data.text;
          scrollDown();
        } else if (event === "error") {
          // What was written so far is void: the fallback reply follows.
          if (text) text.textContent = "";
        } else if (event === "message.end") {
          typing.hidden = true;
          const element = current ?? bubble("assistant", "");
          const finalText = element.querySelector<HTMLElement>(".text");
          if (finalText) finalText.textContent = data.content;
          element.removeAttribute("aria-busy");
          known.add(data.message_id);
          reply(element, data);
          current = undefined;
          text = undefined;
        }
      }
    }
    typing.hidden = true;
    if (streamStatus !== conversationStatus) setStatus(streamStatus);
    // What the turn stored besides its replies (the visitor's message takes its id; a handoff the
    // turn started shows as the status), read from the history.
    const conversationId = host.conversationId();
    if (conversationId) await catchUp(conversationId).catch(() => undefined);
    if (conversationStatus === "handoff") schedulePoll(POLL_FIRST_MS);
  }

  async function send(content: string): Promise<void> {
    if (host.preview || sending) return;
    const trimmed = content.trim();
    const attached = images;
    if (trimmed === "" && attached.length === 0) return;
    sending = true;
    sendButton.disabled = true;
    showError(undefined);
    starters.hidden = true;
    input.value = "";
    images = [];
    pending.replaceChildren();
    const mine = bubble("user", trimmed);
    mine.setAttribute("data-pending", trimmed);
    if (attached.length > 0)
      mine.append(h("div", { class: "thumbs" }, ...attached.map((image) => thumbnail(image.bitmap, 32))));
    host.emit("message", { role: "user", content: trimmed });
    const key = newKey();
    const attempt = async (restarted = false): Promise<void> => {
      typing.hidden = false;
      scrollDown();
      performance.mark("chatbot-widget:send");
      try {
        const conversationId = await ensureConversation();
        const body = JSON.stringify({
          conversation_id: conversationId,
          message: trimmed,
          ...(attached.length > 0
            ? {
                attachments: attached.map((image) => ({
                  type: "image",
                  data: image.data,
                  media_type: image.media_type,
                })),
              }
            : {}),
        });
        await stream(body, key);
      } catch (failure) {
        typing.hidden = true;
        const refusal = failure instanceof Refused ? failure.status : 0;
        if ((refusal === 404 || refusal === 409) && !restarted) {
          // The conversation is gone or closed: the message starts a new one.
          host.setConversationId(null);
          return attempt(true);
        }
        showError(refusal === 429 ? t.busy : t.error, () => {
          showError(undefined);
          void attempt(restarted).finally(done);
        });
        return;
      }
    };
    const done = () => {
      sending = false;
      sendButton.disabled = false;
    };
    await attempt().finally(done);
  }

  // ---------- images ----------
  async function addImages(files: readonly File[]): Promise<void> {
    for (const file of files) {
      if (!IMAGE_TYPES.includes(file.type)) return showError(t.imageType);
      if (file.size > MAX_IMAGE_BYTES) return showError(t.imageTooBig);
      if (images.length >= MAX_IMAGES) return showError(t.tooManyImages);
      const [data, bitmap] = await Promise.all([
        new Promise<string>((resolve, reject) => {
          const reader = new FileReader();
          reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
          reader.onerror = () => reject(reader.error);
          reader.readAsDataURL(file);
        }),
        createImageBitmap(file),
      ]);
      const image: PendingImage = { data, media_type: file.type, bitmap };
      images.push(image);
      const remove = h("button", { type: "button", "aria-label": t.removeImage }, thumbnail(bitmap, 24));
      remove.addEventListener("click", () => {
        images = images.filter((kept) => kept !== image);
        remove.remove();
        input.focus();
      });
      pending.append(remove);
    }
    showError(undefined);
  }

  // ---------- events ----------
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void send(input.value);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void send(input.value);
    }
  });
  input.addEventListener("input", () => {
    input.style.height = "auto";
    input.style.height = `${Math.min(input.scrollHeight + 2, 120)}px`;
  });
  input.addEventListener("paste", (event) => {
    const files = [...(event.clipboardData?.files ?? [])];
    if (files.length === 0) return;
    event.preventDefault();
    void addImages(files);
  });
  attachButton.addEventListener("click", () => fileInput.click());
  fileInput.addEventListener("change", () => {
    void addImages([...(fileInput.files ?? [])]);
    fileInput.value = "";
  });
  retryButton.addEventListener("click", () => retry?.());
  closeButton.addEventListener("click", () => host.close());
  panel.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      host.close();
      return;
    }
    if (event.key !== "Tab") return;
    // Focus stays inside the open dialog.
    const focusable = [
      ...panel.querySelectorAll<HTMLElement>("button, textarea, a[href], [tabindex='0']"),
    ].filter((element) => !element.hasAttribute("disabled") && !element.closest("[hidden]"));
    const first = focusable[0];
    const last = focusable.at(-1);
    const active = host.root.activeElement;
    if (event.shiftKey && active === first) {
      event.preventDefault();
      last?.focus();
    } else if (!event.shiftKey && active === last) {
      event.preventDefault();
      first?.focus();
    }
  });
  host.onSessionChange(() => {
    texts();
    loadedFor = undefined;
    if (!panel.hidden) void load();
  });

  texts();
  input.disabled = host.preview;
  return {
    show() {
      texts();
      panel.hidden = false;
      void load().then(() => {
        if (conversationStatus === "handoff") schedulePoll(0);
      });
      if (!host.preview) input.focus();
      scrollDown();
    },
    hide() {
      panel.hidden = true;
      stopPolling();
    },
  };
};
