/** The console's building blocks: loading, empty and error states, page headings, confirmations, copying. */
import { signal } from "@preact/signals";
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "../api/client.ts";

export type Load<T> =
  | { status: "loading" }
  | { status: "error"; error: unknown }
  | { status: "ready"; data: T };

/** Loads data when `deps` change; `reload` loads again (after a change). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Load<T>, () => void] {
  const [state, setState] = useState<Load<T>>({ status: "loading" });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    if (round === 0) setState({ status: "loading" });
    load().then(
      (data) => live && setState({ status: "ready", data }),
      (error: unknown) => live && setState({ status: "error", error }),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return [state, reload];
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <p aria-busy="true" class="loading">
      {label}
    </p>
  );
}

/** Says that something worked, to screen readers too (a status region). */
export function SuccessNotice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice success" role="status">
      {children}
    </p>
  );
}

/** An error as the API worded it, with the failing fields when there are any. */
export function ErrorNotice({ error, retry }: { error: unknown; retry?: () => void }) {
  const fields = error instanceof ApiError ? error.fields : [];
  return (
    <div role="alert" class="notice error">
      <strong>{messageOf(error)}</strong>
      {fields.length > 0 && (
        <ul>
          {fields.map((field) => (
            <li key={field.loc.join(".")}>
              {field.loc.filter((part) => part !== "body" && part !== "query").join(" → ")}: {field.msg}
            </li>
          ))}
        </ul>
      )}
      {retry && (
        <button type="button" class="secondary outline small" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="notice empty">{children}</div>;
}

/** Renders the loaded data, or its loading or error state. */
export function Loaded<T>({
  state,
  retry,
  children,
}: {
  state: Load<T>;
  retry?: () => void;
  children: (data: T) => ComponentChildren;
}) {
  if (state.status === "loading") return <Loading />;
  if (state.status === "error") return <ErrorNotice error={state.error} {...(retry ? { retry } : {})} />;
  return <>{children(state.data)}</>;
}

/** What the open page is called; the shell makes the browser tab's title of it (app.tsx). */
export const pageTitle = signal("");

/** The page's heading; focused when the page opens, so screen readers announce it. */
export function PageHeader({
  title,
  intro,
  children,
}: {
  title: string;
  intro?: ComponentChildren;
  children?: ComponentChildren;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, [title]);
  useEffect(() => {
    pageTitle.value = title;
  }, [title]);
  return (
    <header class="page-header">
      <div>
        <h1 ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {intro && <p class="intro">{intro}</p>}
      </div>
      {children && <div class="actions">{children}</div>}
    </header>
  );
}

/** Runs a change, keeping its busy and error state for the form that started it. */
export function useAction(): {
  busy: boolean;
  error: unknown;
  run: (work: () => Promise<void>) => Promise<boolean>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      return true;
    } catch (caught) {
      setError(caught);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(null) };
}

/** A form's submit button: busy, and disabled, while the form's action runs. */
export function SubmitButton({
  action,
  children,
}: {
  action: { busy: boolean };
  children: ComponentChildren;
}) {
  return (
    <button type="submit" aria-busy={action.busy} disabled={action.busy}>
      {children}
    </button>
  );
}

/** A button that asks first (a modal dialog: focus stays inside it, Escape cancels). */
export function ConfirmButton({
  label,
  labelDetail,
  question,
  detail,
  confirmLabel,
  onConfirm,
  class: className = "secondary outline small",
  disabled = false,
}: {
  label: string;
  /** Said to screen readers after the label, not shown (what a row's "Remove" removes). */
  labelDetail?: string;
  question: string;
  detail?: string;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  class?: string;
  disabled?: boolean;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const action = useAction();
  const close = () => {
    action.clear();
    dialog.current?.close();
  };
  return (
    <>
      <button type="button" class={className} disabled={disabled} onClick={() => dialog.current?.showModal()}>
        {label}
        {labelDetail && <span class="visually-hidden"> {labelDetail}</span>}
      </button>
      <dialog ref={dialog} aria-label={question}>
        <article class="dialog-card">
          <h2 class="dialog-title">{question}</h2>
          {detail && <p>{detail}</p>}
          {action.error !== null && <ErrorNotice error={action.error} />}
          <footer>
            <button type="button" class="secondary" onClick={close}>
              Cancel
            </button>
            <button
              type="button"
              class="danger"
              aria-busy={action.busy}
              disabled={action.busy}
              onClick={async () => {
                if (await action.run(onConfirm)) dialog.current?.close();
              }}
            >
              {confirmLabel}
            </button>
          </footer>
        </article>
      </dialog>
    </>
  );
}

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="secondary small copy"
      onClick={async () => {
        await navigator.clipboard.writeText(text).catch(() => undefined);
        setCopied(true);
        setTimeout(() => setCopied(false), 2000);
      }}
    >
      {copied ? "Copied" : label}
      <span class="visually-hidden" aria-live="polite">
        {copied ? " to the clipboard" : ""}
      </span>
    </button>
  );
}

export function Badge({
  tone,
  children,
}: {
  tone: "good" | "bad" | "info" | "muted" | "warn";
  children: ComponentChildren;
}) {
  return <span class={`badge ${tone}`}>{children}</span>;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
export const formatTime = (iso: string | null | undefined): string =>
  iso ? timeFormat.format(new Date(iso)) : "—";

/** A form's values by name (text fields; empty ones left out). */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of new FormData(form).entries()) {
    if (typeof value === "string") values[name] = value;
  }
  return values;
}
