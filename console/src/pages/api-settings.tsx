/**
 * Settings → API: the API's base URL, the streaming endpoint's (when the stage has one) and the
 * organization's keys. A new key is shown once, with
 * a copy button and a ready curl command that starts a conversation with one of the chatbots.
 */
import { useState } from "preact/hooks";
import { api, must, type paths } from "../api/client.ts";
import { config, streamBaseUrl } from "../config.ts";
import { canWrite, organizationId } from "../lib/workspace.ts";
import {
  Badge,
  ConfirmButton,
  CopyButton,
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

type CreatedKey = paths["/manage/api-keys"]["post"]["responses"][201]["content"]["application/json"];

export const apiBaseUrl = () => config().apiBaseUrl.replace(/\/$/, "");

export function curlFor(key: string, chatbotId: string): string {
  return `curl -s -X POST ${apiBaseUrl()}/api/conversation \\
  -H "Authorization: Bearer ${key}" \\
  -H "Content-Type: application/json" \\
  -d '{"chatbot_id":"${chatbotId}"}'`;
}

export function ApiSettingsPage() {
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const streamBase = streamBaseUrl();
  return (
    <>
      <PageHeader title="Settings → API" intro="Connect your website, app or automation to your chatbots." />
      <article>
        <h2>API base URL</h2>
        <div class="secret">
          <input readOnly value={apiBaseUrl()} aria-label="API base URL" />
          <CopyButton text={apiBaseUrl()} label="Copy URL" />
        </div>
        <small>
          Send <code>Authorization: Bearer &lt;API key&gt;</code> with every request.{" "}
          <a href="/openapi.json">OpenAPI document</a>
        </small>
        {streamBase && (
          <>
            <h3>Streamed replies</h3>
            <div class="secret">
              <input readOnly value={`${streamBase}/api/message/stream`} aria-label="Streaming endpoint" />
              <CopyButton text={`${streamBase}/api/message/stream`} label="Copy streaming URL" />
            </div>
            <small>
              Same key and body as <code>POST /api/message</code>; the reply comes as server-sent events while
              it is written.
            </small>
          </>
        )}
      </article>
      {canWrite.value ? (
        <>
          {created && <NewKey created={created} onDone={() => setCreated(null)} />}
          <Keys onCreated={setCreated} />
        </>
      ) : (
        <article>
          <h2>API keys</h2>
          <p>Only administrators of the organization see and manage its API keys. Ask one for a key.</p>
        </article>
      )}
    </>
  );
}

function NewKey({ created, onDone }: { created: CreatedKey; onDone: () => void }) {
  const [bots] = useLoad(() => must(api.GET("/manage/chatbots")), [organizationId.value]);
  return (
    <article class="new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title">Your new key “{created.name}”</h2>
      <SuccessNotice>
        Copy the key now: it is shown only this once. Only its first characters are kept for the list.
      </SuccessNotice>
      <div class="secret">
        <input readOnly value={created.key} aria-label="The new API key" id="new-key-value" />
        <CopyButton text={created.key} label="Copy key" />
      </div>
      {created.scope === "chat" && (
        <>
          <h3>Try it from a terminal</h3>
          <Loaded state={bots}>
            {({ chatbots }) => {
              const first = chatbots[0];
              if (!first) {
                return (
                  <p>
                    <Link href="/chatbots/new">Create a chatbot</Link> to start a conversation with it.
                  </p>
                );
              }
              const command = curlFor(created.key, first.chatbot_id);
              return (
                <>
                  <p>
                    Starts a conversation with <strong>{first.name}</strong>; the answer holds the{" "}
                    <code>conversation_id</code> to send messages to with <code>POST /api/message</code>.
                  </p>
                  <pre class="command">
                    <code>{command}</code>
                  </pre>
                  <CopyButton text={command} label="Copy command" />
                </>
              );
            }}
          </Loaded>
        </>
      )}
      <p>
        <button type="button" class="secondary small" onClick={onDone}>
          I have stored the key
        </button>
      </p>
    </article>
  );
}

function Keys({ onCreated }: { onCreated: (created: CreatedKey) => void }) {
  const [state, reload] = useLoad(() => must(api.GET("/manage/api-keys")), [organizationId.value]);
  const create = useAction();
  return (
    <>
      <article>
        <h2>Create an API key</h2>
        <form
          class="filters"
          onSubmit={async (event) => {
            event.preventDefault();
            const form = event.currentTarget;
            const { name = "", scope = "chat" } = formValues(form);
            await create.run(async () => {
              const made = await must(
                api.POST("/manage/api-keys", {
                  body: { name: name.trim(), scope: scope === "manage" ? "manage" : "chat" },
                }),
              );
              form.reset();
              onCreated(made);
              reload();
            });
          }}
        >
          <label>
            Name
            <input name="name" required maxLength={100} placeholder="e.g. Website chat widget" />
          </label>
          <div>
            <label for="new-key-scope">Scope</label>
            <select name="scope" id="new-key-scope">
              <option value="chat">Chat: conversations only</option>
              <option value="manage">Manage: also the management API</option>
            </select>
          </div>
          <SubmitButton action={create}>Create key</SubmitButton>
        </form>
        {create.error !== null && <ErrorNotice error={create.error} />}
      </article>
      <article>
        <h2>API keys</h2>
        <Loaded state={state} retry={reload}>
          {({ api_keys: keys }) =>
            keys.length === 0 ? (
              <Empty>No API keys yet. Create one above to connect your app.</Empty>
            ) : (
              <div class="overflow-auto">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Key</th>
                      <th scope="col">Scope</th>
                      <th scope="col">Created</th>
                      <th scope="col">Last used</th>
                      <th scope="col">
                        <span class="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {keys.map((key) => (
                      <tr key={key.key_id}>
                        <td>{key.name}</td>
                        <td>
                          <code>{key.prefix}</code>
                        </td>
                        <td>
                          <Badge tone={key.scope === "manage" ? "warn" : "info"}>{key.scope}</Badge>
                        </td>
                        <td>{formatTime(key.created_at)}</td>
                        <td>{key.last_used_at ? formatTime(key.last_used_at) : "Never"}</td>
                        <td>
                          <ConfirmButton
                            label={`Revoke ${key.name}`}
                            question={`Revoke the key “${key.name}”?`}
                            detail={`Apps using ${key.prefix} get 401 Invalid API key from their very next request. This cannot be undone.`}
                            confirmLabel="Revoke key"
                            onConfirm={async () => {
                              await must(
                                api.DELETE("/manage/api-keys/{key_id}", {
                                  params: { path: { key_id: key.key_id } },
                                }),
                              );
                              reload();
                            }}
                          />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )
          }
        </Loaded>
      </article>
    </>
  );
}
