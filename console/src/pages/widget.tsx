/**
 * Chatbot → Widget: put the chatbot on the business's own website. On or off, the pages allowed
 * to start visitor sessions, appearance with a live preview (the real widget, loaded from this
 * console's /widget.js as a visitor's page loads it), the daily message budget, identity
 * verification with its secret (shown once, rotated with a day's overlap) and a signing example,
 * and the snippet to paste, with a copy button.
 */
import { useEffect, useState } from "preact/hooks";
import { api, must, type paths } from "../api/client.ts";
import { canWrite, organizationId } from "../lib/workspace.ts";
import {
  CopyButton,
  ErrorNotice,
  formatTime,
  Loaded,
  SubmitButton,
  SuccessNotice,
  useAction,
  useLoad,
} from "../ui/kit.tsx";
import type { Chatbot } from "./chatbots.tsx";

type WidgetSettings =
  paths["/manage/chatbots/{chatbot_id}/widget"]["get"]["responses"][200]["content"]["application/json"];
type Appearance = WidgetSettings["appearance"];

/** What the widget's preview shows: its appearance and the chatbot's welcome. */
interface Greeting extends Appearance {
  welcome_message: string;
}

declare global {
  interface Window {
    ChatbotWidget?: { preview(greeting: Greeting): void };
  }
}

const PREVIEW_ID = "widget-preview";
const languages = [
  ["auto", "The page's language"],
  ["en", "English"],
  ["de", "German"],
  ["fr", "French"],
  ["es", "Spanish"],
  ["nl", "Dutch"],
] as const;

export const snippetFor = (chatbotId: string) =>
  `<script src="${location.origin}/widget.js" data-chatbot-id="${chatbotId}" async></script>`;

const lines = (text: string) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);

/** Loads /widget.js once, in preview mode, into the element with `PREVIEW_ID`. */
function usePreview(greeting: Greeting): void {
  useEffect(() => {
    if (window.ChatbotWidget) return;
    const script = document.createElement("script");
    script.src = "/widget.js";
    script.async = true;
    script.dataset.preview = PREVIEW_ID;
    document.body.append(script);
  }, []);
  useEffect(() => {
    let tries = 0;
    // The script may still be loading: show the appearance as soon as it can.
    const show = () => {
      if (window.ChatbotWidget) window.ChatbotWidget.preview(greeting);
      else if (tries++ < 50) timer = setTimeout(show, 100);
    };
    let timer = setTimeout(show, 0);
    return () => clearTimeout(timer);
  }, [JSON.stringify(greeting)]);
}

export function WidgetTab({ bot }: { bot: Chatbot }) {
  const [state, reload] = useLoad(
    () =>
      must(
        api.GET("/manage/chatbots/{chatbot_id}/widget", {
          params: { path: { chatbot_id: bot.chatbot_id } },
        }),
      ),
    [bot.chatbot_id, organizationId.value],
  );
  return (
    <Loaded state={state} retry={reload}>
      {(settings) => <WidgetSettingsForm bot={bot} settings={settings} onSaved={reload} />}
    </Loaded>
  );
}

function WidgetSettingsForm({
  bot,
  settings,
  onSaved,
}: {
  bot: Chatbot;
  settings: WidgetSettings;
  onSaved: () => void;
}) {
  const action = useAction();
  const [saved, setSaved] = useState(false);
  const [appearance, setAppearance] = useState<Appearance>(settings.appearance);
  const [enabled, setEnabled] = useState(settings.enabled);
  const readOnly = !canWrite.value;
  usePreview({ ...appearance, title: appearance.title || bot.name, welcome_message: bot.welcome_message });
  const set = (change: Partial<Appearance>) => setAppearance((current) => ({ ...current, ...change }));
  const snippet = snippetFor(bot.chatbot_id);

  return (
    <>
      <article>
        <h2>Website widget</h2>
        <p>
          Your chatbot in the corner of your own website: visitors chat with it there, no API key in the page.
          Turn it on, name the pages allowed to show it, then paste the snippet into them.
        </p>
        <div class="widget-layout">
          <form
            aria-label="Widget settings"
            onSubmit={async (event) => {
              event.preventDefault();
              setSaved(false);
              const form = new FormData(event.currentTarget);
              await action.run(async () => {
                await must(
                  api.PUT("/manage/chatbots/{chatbot_id}/widget", {
                    params: { path: { chatbot_id: bot.chatbot_id } },
                    body: {
                      enabled,
                      allowed_origins: lines(String(form.get("allowed_origins") ?? "")),
                      identity_verification: String(
                        form.get("identity_verification") ?? "off",
                      ) as WidgetSettings["identity_verification"],
                      daily_message_budget: Number(form.get("daily_message_budget")),
                      appearance: {
                        ...appearance,
                        starter_questions: appearance.starter_questions.slice(0, 4),
                      },
                    },
                  }),
                );
                setSaved(true);
                onSaved();
              });
            }}
          >
            <fieldset disabled={readOnly}>
              <label>
                <input
                  type="checkbox"
                  role="switch"
                  name="enabled"
                  aria-checked={enabled}
                  checked={enabled}
                  onChange={(event) => setEnabled(event.currentTarget.checked)}
                />
                Visitors can chat on your website
              </label>
              <label>
                Allowed pages (origins, one per line)
                <textarea
                  name="allowed_origins"
                  rows={3}
                  defaultValue={settings.allowed_origins.join("\n")}
                  placeholder={"https://shop.example\nhttps://*.shop.example"}
                  aria-describedby="origins-help"
                />
                <small id="origins-help">
                  Exact origins such as <code>https://shop.example</code> or{" "}
                  <code>http://localhost:8080</code>, or one leading wildcard such as{" "}
                  <code>https://*.shop.example</code>. Up to 20.
                </small>
              </label>
              <fieldset>
                <legend>Appearance</legend>
                <label>
                  Title
                  <input
                    name="title"
                    maxLength={60}
                    value={appearance.title}
                    placeholder={bot.name}
                    onInput={(event) => set({ title: event.currentTarget.value })}
                  />
                </label>
                <div class="grid">
                  <label>
                    Colour
                    <input
                      type="color"
                      name="color"
                      value={appearance.color}
                      onInput={(event) => set({ color: event.currentTarget.value })}
                    />
                  </label>
                  <label>
                    Corner
                    <select
                      name="position"
                      value={appearance.position}
                      onChange={(event) =>
                        set({ position: event.currentTarget.value as Appearance["position"] })
                      }
                    >
                      <option value="right">Bottom right</option>
                      <option value="left">Bottom left</option>
                    </select>
                  </label>
                  <label>
                    Language
                    <select
                      name="language"
                      value={appearance.language}
                      onChange={(event) => set({ language: event.currentTarget.value })}
                    >
                      {languages.map(([tag, name]) => (
                        <option key={tag} value={tag}>
                          {name}
                        </option>
                      ))}
                    </select>
                  </label>
                </div>
                <label>
                  Launcher text
                  <input
                    name="launcher_label"
                    maxLength={40}
                    value={appearance.launcher_label}
                    placeholder="Chat"
                    onInput={(event) => set({ launcher_label: event.currentTarget.value })}
                  />
                </label>
                <label>
                  Starter questions (up to 4, one per line)
                  <textarea
                    name="starter_questions"
                    rows={3}
                    value={appearance.starter_questions.join("\n")}
                    onInput={(event) =>
                      set({ starter_questions: event.currentTarget.value.split("\n").slice(0, 4) })
                    }
                    onBlur={() => set({ starter_questions: lines(appearance.starter_questions.join("\n")) })}
                  />
                </label>
              </fieldset>
              <label>
                Daily message budget
                <input
                  type="number"
                  name="daily_message_budget"
                  min={0}
                  max={1000000}
                  required
                  defaultValue={String(settings.daily_message_budget)}
                  aria-describedby="budget-help"
                />
                <small id="budget-help">
                  Visitor messages the widget takes per day (UTC). Past it, visitors are asked to come back
                  tomorrow: no model is called.
                </small>
              </label>
              <label>
                Identity verification
                <select name="identity_verification" defaultValue={settings.identity_verification}>
                  <option value="off">Off: every visitor is anonymous</option>
                  <option value="optional">Optional: signed-in customers are recognised</option>
                  <option value="required">Required: only signed-in customers can chat</option>
                </select>
              </label>
              {!readOnly && <SubmitButton action={action}>Save widget</SubmitButton>}
            </fieldset>
            {action.error ? <ErrorNotice error={action.error} /> : null}
            {saved && <SuccessNotice>The widget's settings are saved.</SuccessNotice>}
          </form>
          <section class="widget-preview-frame" aria-labelledby="preview-title">
            <h3 id="preview-title">Preview</h3>
            <div id={PREVIEW_ID} class="widget-preview" />
          </section>
        </div>
      </article>
      <article>
        <h2>Install</h2>
        <p>
          Paste this into the pages you allowed, just before <code>&lt;/body&gt;</code>:
        </p>
        <pre class="command">
          <code>{snippet}</code>
        </pre>
        <CopyButton text={snippet} label="Copy snippet" />
        {!settings.enabled && (
          <p>
            <strong>The widget is off:</strong> turn it on above, or pages show nothing.
          </p>
        )}
      </article>
      <IdentitySecret bot={bot} settings={settings} onRotated={onSaved} />
    </>
  );
}

const signingExample = `// On your server (Node.js, the jose package), for the signed-in customer:
import { SignJWT } from "jose";
const identity = await new SignJWT({ name: customer.name, email: customer.email })
  .setProtectedHeader({ alg: "HS256" })
  .setSubject(String(customer.id))
  .setExpirationTime("1h")
  .sign(new TextEncoder().encode(process.env.CHATBOT_IDENTITY_SECRET));
// In the page: ChatbotWidget.identify(identity)`;

function IdentitySecret({
  bot,
  settings,
  onRotated,
}: {
  bot: Chatbot;
  settings: WidgetSettings;
  onRotated: () => void;
}) {
  const action = useAction();
  const [secret, setSecret] = useState<string | null>(null);
  const made = settings.identity_secret_created_at;
  return (
    <article aria-labelledby="identity-title">
      <h2 id="identity-title">Identity secret</h2>
      <p>
        Your server signs an identity token (a JWT, HS256) for a signed-in customer with this secret; the
        widget passes it on, and the chatbot then knows who it is talking to, on every device.
      </p>
      <p>
        {made ? <>The current secret was made {formatTime(made)}.</> : "No secret has been made yet."}
        {settings.previous_identity_secret_expires_at && (
          <>
            {" "}
            The previous one still verifies until {formatTime(settings.previous_identity_secret_expires_at)}.
          </>
        )}
      </p>
      {secret && (
        <>
          <SuccessNotice>
            Copy the secret now: it is shown only this once.
            {made ? " The previous secret keeps working for 24 hours." : ""}
          </SuccessNotice>
          <div class="secret">
            <input readOnly value={secret} aria-label="The new identity secret" />
            <CopyButton text={secret} label="Copy secret" />
          </div>
        </>
      )}
      {canWrite.value && (
        <button
          type="button"
          class="secondary"
          disabled={action.busy}
          onClick={() =>
            action.run(async () => {
              const rotated = await must(
                api.POST("/manage/chatbots/{chatbot_id}/widget/identity-secret", {
                  params: { path: { chatbot_id: bot.chatbot_id } },
                }),
              );
              setSecret(rotated.identity_secret);
              onRotated();
            })
          }
        >
          {made ? "Rotate secret" : "Make a secret"}
        </button>
      )}
      {action.error ? <ErrorNotice error={action.error} /> : null}
      <h3>Signing a token</h3>
      <pre class="command">
        <code>{signingExample}</code>
      </pre>
    </article>
  );
}
