/**
 * widget.js: what a business's page loads with one async script tag, and all it loads until the
 * visitor opens the chat (kept under 10 KB gzip, printed by the build). It
 *
 *   - reads its chatbot from `data-chatbot-id` and finds the API at its own script's origin
 *     (`data-api` overrides; `data-language` forces a language);
 *   - starts, keeps and renews the visitor's session (the visitor secret and the access token in
 *     the site's storage, shared by its tabs); a page whose origin is not allowed gets no session and
 *     shows nothing;
 *   - paints the launcher in a Shadow DOM, sized in px, its styles adopted as constructed style
 *     sheets (no inline style or script, so a strict Content-Security-Policy holds);
 *   - defines `window.ChatbotWidget` (open, close, identify, reset, on, off) and no other global;
 *   - loads the panel (panel.ts) the first time the chat opens.
 */
import type { Greeting, MountPanel, Panel, PanelHost, WidgetEvent } from "./host.ts";
import { type Language, languageOf, launcherTexts } from "./strings.ts";
import { adopt, launcherCss } from "./styles.ts";
import { icon, onAccent } from "./ui.ts";

/** The panel module's path beside this script (content-hashed; set by the build). */
declare const PANEL_PATH: string;

interface Session {
  visitor: string;
  token: string;
  /** Epoch ms. */
  expiresAt: number;
  conversationId: string | null;
  greeting: Greeting;
  /** The `sub` of the identity this session proved, if any. */
  subject?: string;
}

type Listener = (detail?: unknown) => void;

export interface ChatbotWidgetApi {
  open(): Promise<void>;
  close(): void;
  identify(identityToken: string): Promise<void>;
  reset(): void;
  on(event: WidgetEvent, listener: Listener): void;
  off(event: WidgetEvent, listener: Listener): void;
  /** The console's live preview: show this appearance (only with `data-preview`). */
  preview(greeting: Greeting): void;
}

declare global {
  interface Window {
    ChatbotWidget?: ChatbotWidgetApi;
  }
}

/** A session is renewed when less than this is left of its token. */
const RENEW_BEFORE_MS = 2 * 60_000;

class SessionRefused extends Error {
  constructor(readonly status: number) {
    super(`session refused (${status})`);
  }
}

/** The `sub` of an identity token, read without verifying (the API verifies; this only avoids a renewal). */
function subjectOf(token: string): string | undefined {
  try {
    const payload = JSON.parse(atob((token.split(".")[1] ?? "").replace(/-/g, "+").replace(/_/g, "/")));
    return typeof payload.sub === "string" ? payload.sub : undefined;
  } catch {
    return undefined;
  }
}

function boot(): void {
  const script = document.currentScript as HTMLScriptElement | null;
  const chatbotId = script?.dataset.chatbotId ?? "";
  if (!script || window.ChatbotWidget) return;
  const scriptUrl = new URL(script.src, location.href);
  const base = scriptUrl.href.slice(0, scriptUrl.href.lastIndexOf("/"));
  const api = (script.dataset.api ?? scriptUrl.origin).replace(/\/$/, "");
  const previewIn = script.dataset.preview;
  const storageKey = `chatbot-widget:${chatbotId}`;

  // ---------- the session, in the site's storage (shared by its tabs) ----------
  const storage = (() => {
    try {
      localStorage.getItem(storageKey);
      return localStorage;
    } catch {
      return undefined; // storage blocked: the session lives as long as the page
    }
  })();
  const read = (): Session | undefined => {
    try {
      return JSON.parse(storage?.getItem(storageKey) ?? "null") ?? undefined;
    } catch {
      return undefined;
    }
  };
  let session = read();
  let identity: string | undefined;
  let pending: Promise<Session> | undefined;
  const sessionListeners: (() => void)[] = [];
  const changed = () => {
    for (const listener of sessionListeners) listener();
  };
  const write = (next: Session | undefined) => {
    session = next;
    try {
      if (next) storage?.setItem(storageKey, JSON.stringify(next));
      else storage?.removeItem(storageKey);
    } catch {
      // Full or blocked storage: this page keeps the session in memory.
    }
  };
  addEventListener("storage", (event) => {
    if (event.key !== storageKey) return;
    session = read();
    changed();
  });

  async function startSession(): Promise<Session> {
    const answer = await fetch(`${api}/api/widget/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        chatbot_id: chatbotId,
        ...(session?.visitor ? { visitor: session.visitor } : {}),
        ...(identity ? { identity } : {}),
      }),
    });
    if (answer.status === 401 && identity) {
      // An identity token that no longer verifies (expired): go on as the visitor this browser is.
      identity = undefined;
      return startSession();
    }
    if (!answer.ok) throw new SessionRefused(answer.status);
    const body = await answer.json();
    const subject = identity ? subjectOf(identity) : body.identified ? session?.subject : undefined;
    const next: Session = {
      visitor: body.visitor,
      token: body.token,
      expiresAt: Date.parse(body.expires_at),
      conversationId: body.conversation_id,
      greeting: body.widget,
      ...(subject ? { subject } : {}),
    };
    write(next);
    return next;
  }

  function current(fresh = false): Promise<Session> {
    if (!fresh && session && session.expiresAt - Date.now() > RENEW_BEFORE_MS)
      return Promise.resolve(session);
    pending ??= startSession().finally(() => {
      pending = undefined;
    });
    return pending;
  }

  // ---------- events ----------
  const listeners = new Map<WidgetEvent, Set<Listener>>();
  const emit = (event: WidgetEvent, detail?: unknown) => {
    for (const listener of listeners.get(event) ?? []) {
      try {
        listener(detail);
      } catch (error) {
        console.error(error);
      }
    }
  };

  // ---------- the launcher ----------
  const host = document.createElement("div");
  host.id = "chatbot-widget";
  const root = host.attachShadow({ mode: "open" });
  adopt(root, launcherCss);
  const launcher = document.createElement("button");
  launcher.type = "button";
  launcher.className = "launcher";
  launcher.setAttribute("aria-expanded", "false");
  launcher.setAttribute("aria-haspopup", "dialog");
  const label = document.createElement("span");
  launcher.append(icon("M4 4h16v12H7l-3 3z"), label);
  root.append(launcher);

  let greeting: Greeting | undefined;
  let language: Language = "en";
  function paint(next: Greeting): void {
    greeting = next;
    language = languageOf(
      script?.dataset.language ??
        (next.language !== "auto" ? next.language : document.documentElement.lang || navigator.language),
    );
    const [chat, openLabel] = launcherTexts[language];
    host.className = `${next.position}${previewIn ? " preview" : ""}`;
    host.style.setProperty("--cbw-accent", next.color);
    host.style.setProperty("--cbw-on-accent", onAccent(next.color));
    label.textContent = next.launcher_label || chat;
    launcher.setAttribute("aria-label", `${openLabel}: ${next.title}`);
  }

  // ---------- the panel ----------
  let panel: Promise<Panel> | undefined;
  let isOpen = false;
  function loadPanel(): Promise<Panel> {
    panel ??= import(`${base}/${PANEL_PATH}`).then((module: { mount: MountPanel }) => {
      const panelHost: PanelHost = {
        root,
        api,
        chatbotId,
        get language() {
          return language;
        },
        get greeting() {
          return greeting as Greeting;
        },
        preview: previewIn !== undefined,
        token: (fresh) => current(fresh).then((next) => next.token),
        conversationId: () => session?.conversationId ?? null,
        setConversationId: (id) => {
          if (session) write({ ...session, conversationId: id });
        },
        close,
        emit,
        onSessionChange: (listener) => {
          sessionListeners.push(listener);
        },
      };
      return module.mount(panelHost);
    });
    panel.catch(() => {
      panel = undefined; // a failed load (network) may succeed on the next open
    });
    return panel;
  }

  async function open(): Promise<void> {
    if (isOpen || !greeting) return;
    isOpen = true;
    launcher.setAttribute("aria-expanded", "true");
    launcher.setAttribute("aria-label", `${launcherTexts[language][2]}: ${greeting.title}`);
    try {
      (await loadPanel()).show();
      emit("open");
    } catch (error) {
      isOpen = false;
      launcher.setAttribute("aria-expanded", "false");
      console.error("ChatbotWidget: the chat could not be loaded", error);
    }
  }

  function close(): void {
    if (!isOpen || !greeting) return;
    isOpen = false;
    launcher.setAttribute("aria-expanded", "false");
    launcher.setAttribute("aria-label", `${launcherTexts[language][1]}: ${greeting.title}`);
    void panel?.then((shown) => shown.hide());
    launcher.focus();
    emit("close");
  }

  launcher.addEventListener("click", () => (isOpen ? close() : void open()));

  const show = (next: Greeting) => {
    paint(next);
    (previewIn ? (document.getElementById(previewIn) ?? document.body) : document.body).append(host);
    requestAnimationFrame(() => performance.mark("chatbot-widget:launcher"));
  };

  window.ChatbotWidget = {
    open,
    close,
    async identify(identityToken: string) {
      identity = identityToken;
      const subject = subjectOf(identityToken);
      if (subject && session?.subject === subject && session.expiresAt - Date.now() > RENEW_BEFORE_MS) return;
      await current(true);
      changed();
    },
    reset() {
      identity = undefined;
      write(undefined);
      close();
      changed();
    },
    on(event, listener) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event)?.add(listener);
    },
    off(event, listener) {
      listeners.get(event)?.delete(listener);
    },
    preview(next) {
      if (previewIn === undefined) return;
      if (host.isConnected) paint(next);
      else show(next);
      changed();
      void open();
    },
  };
  if (previewIn !== undefined) return; // the console calls preview() with the appearance to show
  if (session && session.expiresAt - Date.now() > RENEW_BEFORE_MS) show(session.greeting);
  else
    current().then(
      (started) => show(started.greeting),
      (error: unknown) => {
        // An origin that is not allowed, a widget that is off, or the API out of reach: nothing to show.
        console.warn("ChatbotWidget: no session", error instanceof Error ? error.message : error);
      },
    );
}

boot();
