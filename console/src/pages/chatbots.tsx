/** Chatbots: the list, a new chatbot, and one chatbot's settings, knowledge, tools and Try it panel. */
import { useState } from "preact/hooks";
import { api, must, type paths } from "../api/client.ts";
import { navigate } from "../lib/router.ts";
import { canWrite, organizationId } from "../lib/workspace.ts";
import {
  Badge,
  ConfirmButton,
  Empty,
  ErrorNotice,
  formatTime,
  formValues,
  Loaded,
  PageHeader,
  SubmitButton,
  SuccessNotice,
  useAction,
  useLoad,
} from "../ui/kit.tsx";
import { Link } from "../ui/nav.tsx";
import { clearKeyFields, EngineFields, engineFromForm } from "./engine-settings.tsx";
import { KnowledgeGaps, TestQuestion } from "./knowledge-answers.tsx";
import { ChatbotTools } from "./tools.tsx";
import { TryIt } from "./try-it.tsx";
import { WidgetTab } from "./widget.tsx";

export type Chatbot =
  paths["/manage/chatbots/{chatbot_id}"]["get"]["responses"][200]["content"]["application/json"];
type ChatbotChanges = NonNullable<
  paths["/manage/chatbots/{chatbot_id}"]["patch"]["requestBody"]
>["content"]["application/json"];
type Entry =
  paths["/manage/chatbots/{chatbot_id}/knowledge"]["get"]["responses"][200]["content"]["application/json"]["entries"][number];
type NewEntry =
  paths["/manage/chatbots/{chatbot_id}/knowledge"]["post"]["requestBody"]["content"]["application/json"];

const engineName = (engine: Chatbot["engine"]) =>
  engine.kind === "scripted"
    ? "Scripted"
    : engine.kind === "bedrock"
      ? `Bedrock · ${engine.model_id}`
      : `OpenAI-compatible · ${engine.model}`;

export function ChatbotsPage() {
  const [state, reload] = useLoad(() => must(api.GET("/manage/chatbots")), [organizationId.value]);
  return (
    <>
      <PageHeader
        title="Chatbots"
        intro="Each chatbot answers your visitors with its own settings, knowledge and look-up tools."
      >
        {canWrite.value && (
          <Link href="/chatbots/new" role="button">
            New chatbot
          </Link>
        )}
      </PageHeader>
      <Loaded state={state} retry={reload}>
        {({ chatbots }) =>
          chatbots.length === 0 ? (
            <Empty>
              <p>No chatbots yet.</p>
              {canWrite.value ? (
                <Link href="/chatbots/new">Create your first chatbot</Link>
              ) : (
                <p>An admin can create one.</p>
              )}
            </Empty>
          ) : (
            <div class="overflow-auto">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Engine</th>
                    <th scope="col">Chatbot id</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {chatbots.map((bot) => (
                    <tr key={bot.chatbot_id}>
                      <td>
                        <Link href={`/chatbots/${bot.chatbot_id}`}>{bot.name}</Link>
                      </td>
                      <td>{engineName(bot.engine)}</td>
                      <td>
                        <code>{bot.chatbot_id}</code>
                      </td>
                      <td>{formatTime(bot.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
    </>
  );
}

export function NewChatbotPage() {
  const action = useAction();
  if (!canWrite.value) {
    return (
      <>
        <PageHeader title="New chatbot" />
        <p>Only administrators create chatbots.</p>
      </>
    );
  }
  return (
    <>
      <PageHeader
        title="New chatbot"
        intro="Start with a name and the two replies every chatbot needs; change anything later."
      />
      <article>
        <form
          onSubmit={async (event) => {
            event.preventDefault();
            const values = formValues(event.currentTarget);
            await action.run(async () => {
              const created = await must(
                api.POST("/manage/chatbots", {
                  body: {
                    name: (values.name ?? "").trim(),
                    ...(values.welcome_message ? { welcome_message: values.welcome_message } : {}),
                    ...(values.fallback_reply ? { fallback_reply: values.fallback_reply } : {}),
                  },
                }),
              );
              navigate(`/chatbots/${created.chatbot_id}/knowledge`);
            });
          }}
        >
          <label>
            Name
            <input name="name" required maxLength={120} placeholder="e.g. Shop assistant" />
          </label>
          <label>
            Welcome message
            <textarea
              name="welcome_message"
              maxLength={2000}
              rows={2}
              placeholder="Hi! How can I help you today?"
            />
            <small>The scripted engine's answer to a greeting.</small>
          </label>
          <label>
            Fallback reply
            <textarea
              name="fallback_reply"
              maxLength={2000}
              rows={2}
              placeholder="Sorry, I can't help with that right now."
            />
            <small>Sent when the chatbot has no answer, or its model fails or is too slow.</small>
          </label>
          {action.error !== null && <ErrorNotice error={action.error} />}
          <SubmitButton action={action}>Create chatbot</SubmitButton>
        </form>
      </article>
    </>
  );
}

type Tab = "settings" | "knowledge" | "tools" | "widget" | "try";

export function ChatbotPage({ chatbotId, tab }: { chatbotId: string; tab: Tab }) {
  const [state, reload] = useLoad(
    () => must(api.GET("/manage/chatbots/{chatbot_id}", { params: { path: { chatbot_id: chatbotId } } })),
    [chatbotId, organizationId.value],
  );
  return (
    <Loaded state={state} retry={reload}>
      {(bot) => (
        <>
          <PageHeader
            title={bot.name}
            intro={
              <>
                Chatbot <code>{bot.chatbot_id}</code>
              </>
            }
          >
            {canWrite.value && (
              <ConfirmButton
                label="Delete chatbot"
                question={`Delete “${bot.name}”?`}
                detail="Its knowledge and tools go with it. Its conversations stay readable; new messages to them are refused."
                confirmLabel="Delete chatbot"
                onConfirm={async () => {
                  await must(
                    api.DELETE("/manage/chatbots/{chatbot_id}", {
                      params: { path: { chatbot_id: chatbotId } },
                    }),
                  );
                  navigate("/chatbots");
                }}
              />
            )}
          </PageHeader>
          <nav aria-label="Chatbot" class="tabs">
            <Link href={`/chatbots/${chatbotId}`}>Settings</Link>
            <Link href={`/chatbots/${chatbotId}/knowledge`}>Knowledge</Link>
            <Link href={`/chatbots/${chatbotId}/tools`}>Tools</Link>
            <Link href={`/chatbots/${chatbotId}/widget`}>Widget</Link>
            {canWrite.value && <Link href={`/chatbots/${chatbotId}/try`}>Try it</Link>}
          </nav>
          {tab === "settings" && <Settings bot={bot} onSaved={reload} />}
          {tab === "knowledge" && <Knowledge chatbotId={chatbotId} />}
          {tab === "tools" && <ChatbotTools chatbotId={chatbotId} />}
          {tab === "widget" && <WidgetTab bot={bot} />}
          {tab === "try" &&
            (canWrite.value ? <TryIt bot={bot} /> : <p>Only administrators can try chatbots here.</p>)}
        </>
      )}
    </Loaded>
  );
}

function Settings({ bot, onSaved }: { bot: Chatbot; onSaved: () => void }) {
  const action = useAction();
  const [saved, setSaved] = useState(false);
  const readOnly = !canWrite.value;
  return (
    <article>
      <h2>Settings</h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setSaved(false);
          const form = event.currentTarget;
          const values = formValues(form);
          const changes: ChatbotChanges = {};
          const text = (name: "name" | "instructions" | "welcome_message" | "fallback_reply") => {
            const value = values[name] ?? "";
            if (value !== bot[name]) changes[name] = value;
          };
          text("name");
          text("instructions");
          text("welcome_message");
          text("fallback_reply");
          const number = (name: "temperature" | "max_output_tokens" | "history_window") => {
            const value = Number(values[name]);
            if (values[name] !== undefined && value !== bot[name]) changes[name] = value;
          };
          number("temperature");
          number("max_output_tokens");
          number("history_window");
          const engine = engineFromForm(values, bot);
          if (engine.changed) changes.engine = engine.engine;
          const handoff = {
            allowed: values.handoff_allowed === "on",
            message: values.handoff_message ?? bot.handoff.message,
            phrases: (values.handoff_phrases ?? "")
              .split("\n")
              .map((phrase) => phrase.trim())
              .filter(Boolean),
          };
          if (
            handoff.allowed !== bot.handoff.allowed ||
            handoff.message !== bot.handoff.message ||
            handoff.phrases.join("\n") !== bot.handoff.phrases.join("\n")
          )
            changes.handoff = handoff;
          const timeout = (values.inactivity_timeout_minutes ?? "").trim();
          const minutes = timeout === "" ? null : Number(timeout);
          if (minutes !== bot.inactivity_timeout_minutes) changes.inactivity_timeout_minutes = minutes;
          await action.run(async () => {
            await must(
              api.PATCH("/manage/chatbots/{chatbot_id}", {
                params: { path: { chatbot_id: bot.chatbot_id } },
                body: changes,
              }),
            );
            // A pasted key is sent once: the page keeps no copy of it (the saved engine shows its hint).
            clearKeyFields(form);
            setSaved(true);
            onSaved();
          });
        }}
      >
        <fieldset disabled={readOnly}>
          <label>
            Name
            <input name="name" required maxLength={120} defaultValue={bot.name} />
          </label>
          <EngineFields bot={bot} />
          <label>
            Instructions
            <textarea name="instructions" rows={4} maxLength={8000} defaultValue={bot.instructions} />
            <small>The model's system prompt (model engines).</small>
          </label>
          <label>
            Welcome message
            <textarea
              name="welcome_message"
              rows={2}
              maxLength={2000}
              required
              defaultValue={bot.welcome_message}
            />
          </label>
          <label>
            Fallback reply
            <textarea
              name="fallback_reply"
              rows={2}
              maxLength={2000}
              required
              defaultValue={bot.fallback_reply}
            />
          </label>
          <div class="grid">
            <label>
              Temperature
              <input
                name="temperature"
                type="number"
                min={0}
                max={1}
                step={0.05}
                defaultValue={bot.temperature}
              />
            </label>
            <label>
              Max output tokens
              <input
                name="max_output_tokens"
                type="number"
                min={16}
                max={8192}
                step={1}
                defaultValue={bot.max_output_tokens}
              />
            </label>
            <label>
              History window
              <input
                name="history_window"
                type="number"
                min={0}
                max={50}
                step={1}
                defaultValue={bot.history_window}
              />
            </label>
          </div>
        </fieldset>
        <fieldset disabled={readOnly}>
          <legend>Human handoff</legend>
          <label>
            <input
              name="handoff_allowed"
              type="checkbox"
              defaultChecked={bot.handoff.allowed}
              aria-describedby="handoff-allowed-hint"
            />
            Visitors and the model may ask for a person
          </label>
          <small id="handoff-allowed-hint">
            Off: only your own application (the API) and people in the Inbox hand a conversation to a person.
          </small>
          <label>
            Handoff message
            <textarea
              name="handoff_message"
              rows={2}
              maxLength={2000}
              required
              defaultValue={bot.handoff.message}
            />
            <small>The chatbot's answer to the message that hands the conversation to a person.</small>
          </label>
          <label>
            Handoff phrases
            <textarea
              name="handoff_phrases"
              rows={3}
              defaultValue={bot.handoff.phrases.join("\n")}
              placeholder={"talk to a person\nhuman please"}
            />
            <small>
              One a line, at most 50 (scripted engine): a visitor message containing one asks for a person.
            </small>
          </label>
          <label>
            Close after inactivity (minutes)
            <input
              name="inactivity_timeout_minutes"
              type="number"
              min={1}
              max={43200}
              step={1}
              defaultValue={bot.inactivity_timeout_minutes ?? ""}
              placeholder="Never"
            />
            <small>A conversation quiet this long is closed. Empty: never.</small>
          </label>
        </fieldset>
        {action.error !== null && <ErrorNotice error={action.error} />}
        {saved && <SuccessNotice>Saved.</SuccessNotice>}
        {!readOnly && <SubmitButton action={action}>Save settings</SubmitButton>}
      </form>
    </article>
  );
}

function Knowledge({ chatbotId }: { chatbotId: string }) {
  const [state, reload] = useLoad(
    () =>
      must(
        api.GET("/manage/chatbots/{chatbot_id}/knowledge", { params: { path: { chatbot_id: chatbotId } } }),
      ),
    [chatbotId],
  );
  const [editing, setEditing] = useState<Entry | null>(null);
  return (
    <>
      {canWrite.value && (
        <EntryForm
          key={editing?.entry_id ?? "new"}
          chatbotId={chatbotId}
          entry={editing}
          onDone={() => {
            setEditing(null);
            reload();
          }}
        />
      )}
      <article>
        <h2>Knowledge</h2>
        <p class="intro">Questions with their answers, and text snippets, that the chatbot answers from.</p>
        <Loaded state={state} retry={reload}>
          {({ entries }) =>
            entries.length === 0 ? (
              <Empty>No knowledge yet.{canWrite.value ? " Add a question and its answer above." : ""}</Empty>
            ) : (
              <ul class="cards">
                {entries.map((entry) => (
                  <li key={entry.entry_id}>
                    <article>
                      {entry.kind === "qa" ? (
                        <>
                          <Badge tone="info">Q&amp;A</Badge> <strong>{entry.question}</strong>
                          <p>{entry.answer}</p>
                        </>
                      ) : (
                        <>
                          <Badge tone="muted">Snippet</Badge> <strong>{entry.title ?? "Untitled"}</strong>
                          <p>{entry.text}</p>
                        </>
                      )}
                      {canWrite.value && (
                        <div class="actions">
                          <button
                            type="button"
                            class="secondary outline small"
                            onClick={() => setEditing(entry)}
                          >
                            Edit
                          </button>
                          <ConfirmButton
                            label="Delete"
                            question="Delete this entry?"
                            confirmLabel="Delete entry"
                            onConfirm={async () => {
                              await must(
                                api.DELETE("/manage/chatbots/{chatbot_id}/knowledge/{entry_id}", {
                                  params: { path: { chatbot_id: chatbotId, entry_id: entry.entry_id } },
                                }),
                              );
                              reload();
                            }}
                          />
                        </div>
                      )}
                    </article>
                  </li>
                ))}
              </ul>
            )
          }
        </Loaded>
      </article>
      <TestQuestion chatbotId={chatbotId} />
      <KnowledgeGaps chatbotId={chatbotId} onAnswered={reload} />
    </>
  );
}

function EntryForm({
  chatbotId,
  entry,
  onDone,
}: {
  chatbotId: string;
  entry: Entry | null;
  onDone: () => void;
}) {
  const [kind, setKind] = useState<"qa" | "snippet">(entry?.kind === "snippet" ? "snippet" : "qa");
  const action = useAction();
  return (
    <article>
      <h2>{entry ? "Edit entry" : "Add knowledge"}</h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const form = event.currentTarget;
          const values = formValues(form);
          const body: NewEntry =
            kind === "qa"
              ? { kind: "qa", question: (values.question ?? "").trim(), answer: (values.answer ?? "").trim() }
              : {
                  kind: "snippet",
                  text: (values.text ?? "").trim(),
                  ...(values.title?.trim() ? { title: values.title.trim() } : {}),
                };
          await action.run(async () => {
            if (entry) {
              await must(
                api.PATCH("/manage/chatbots/{chatbot_id}/knowledge/{entry_id}", {
                  params: { path: { chatbot_id: chatbotId, entry_id: entry.entry_id } },
                  body,
                }),
              );
            } else {
              await must(
                api.POST("/manage/chatbots/{chatbot_id}/knowledge", {
                  params: { path: { chatbot_id: chatbotId } },
                  body,
                }),
              );
            }
            form.reset();
            onDone();
          });
        }}
      >
        <fieldset>
          <legend>Kind</legend>
          <label>
            <input
              type="radio"
              name="kind"
              value="qa"
              checked={kind === "qa"}
              onChange={() => setKind("qa")}
            />
            Question and answer
          </label>
          <label>
            <input
              type="radio"
              name="kind"
              value="snippet"
              checked={kind === "snippet"}
              onChange={() => setKind("snippet")}
            />
            Text snippet
          </label>
        </fieldset>
        {kind === "qa" ? (
          <>
            <label>
              Question
              <input name="question" required maxLength={8000} defaultValue={entry?.question ?? ""} />
            </label>
            <label>
              Answer
              <textarea name="answer" required rows={3} maxLength={8000} defaultValue={entry?.answer ?? ""} />
            </label>
          </>
        ) : (
          <>
            <label>
              Title (optional)
              <input name="title" maxLength={8000} defaultValue={entry?.title ?? ""} />
            </label>
            <label>
              Text
              <textarea name="text" required rows={4} maxLength={8000} defaultValue={entry?.text ?? ""} />
            </label>
          </>
        )}
        {action.error !== null && <ErrorNotice error={action.error} />}
        <div class="actions">
          <SubmitButton action={action}>{entry ? "Save entry" : "Add entry"}</SubmitButton>
          {entry && (
            <button type="button" class="secondary" onClick={onDone}>
              Cancel
            </button>
          )}
        </div>
      </form>
    </article>
  );
}
