/**
 * Tools: a chatbot's order and parcel look-ups, on the Tools page (any chatbot) and on a chatbot's
 * own Tools tab. Add one from a platform template (or the generic read-only GET) with a form built
 * from the template's own description (settings, credentials, what the chatbot must collect
 * first), change everything the API lets change (name, description, settings, request cap,
 * credentials), and Test it with sample values against the real platform. Credentials are
 * write-only: the API answers with masked hints only, and an edit replaces them whole or not at all.
 */
import { useState } from "preact/hooks";
import { api, must, type paths } from "../api/client.ts";
import { navigate, queryParam } from "../lib/router.ts";
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

type Template =
  paths["/manage/tool-templates"]["get"]["responses"][200]["content"]["application/json"]["templates"][number];
type Tool =
  paths["/manage/chatbots/{chatbot_id}/tools"]["get"]["responses"][200]["content"]["application/json"]["tools"][number];
type ToolKind =
  paths["/manage/chatbots/{chatbot_id}/tools"]["post"]["requestBody"]["content"]["application/json"]["kind"];
type ToolChanges = NonNullable<
  paths["/manage/chatbots/{chatbot_id}/tools/{tool_id}"]["patch"]["requestBody"]
>["content"]["application/json"];
type TestResult =
  paths["/manage/chatbots/{chatbot_id}/tools/{tool_id}/test"]["post"]["responses"][200]["content"]["application/json"];

interface SchemaField {
  type?: string;
  format?: string;
  enum?: string[];
  const?: string;
  default?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
}

/** What each platform calls its values, for people setting a tool up. */
const labels: Record<string, [string, string?]> = {
  shopUrl: ["Shop URL", "The shop's https address, e.g. https://shop.example.com"],
  authMode: ["How to send the key", "basic: an Authorization header; query: for hosts that strip it"],
  shipmentTracking: ["The shop runs the Shipment Tracking extension"],
  shop: ["Shop name", "The part before .myshopify.com"],
  apiVersion: ["Admin API version"],
  clusterUrl: ["Cluster URL", "Your Lightspeed eCom API cluster, e.g. https://api.webshopapp.com"],
  language: ["Language", "Two letters, e.g. en"],
  verifyEmail: ["Also check the visitor's e-mail address"],
  subdomain: ["Picqer subdomain", "The part before .picqer.com"],
  contact: ["Contact for Picqer's User-Agent", "Your e-mail address or website"],
  purpose: ["What the look-up is for", "Shown to the model: when to call this tool"],
  urlTemplate: ["URL template", "https URL with {variable} placeholders"],
  consumerKey: ["Consumer key", "ck_…"],
  consumerSecret: ["Consumer secret", "cs_…"],
  accessToken: ["Admin API access token", "shpat_…"],
  apiKey: ["API key"],
  apiSecret: ["API secret"],
  publicKey: ["Public key"],
  secretKey: ["Secret key"],
  headerValue: ["Header value", "Sent in the header the settings name"],
};

const labelOf = (name: string) =>
  labels[name]?.[0] ?? name.replace(/([A-Z])/g, " $1").replace(/^./, (c) => c.toUpperCase());
const hintOf = (name: string) => labels[name]?.[1];

const resultTone = (result: string): "good" | "bad" | "warn" | "muted" =>
  result === "found"
    ? "good"
    : result === "not_found" || result === "needs_input"
      ? "muted"
      : result === "rate_limited"
        ? "warn"
        : "bad";

export function ToolsPage() {
  const chosen = queryParam("chatbot");
  const [bots, reloadBots] = useLoad(() => must(api.GET("/manage/chatbots")), [organizationId.value]);
  return (
    <>
      <PageHeader
        title="Tools"
        intro="Let a chatbot look up live orders and parcels in your shop's own systems."
      />
      <Loaded state={bots} retry={reloadBots}>
        {({ chatbots }) => {
          const bot = chatbots.find((candidate) => candidate.chatbot_id === chosen) ?? chatbots[0];
          if (!bot) {
            return (
              <Empty>
                Tools belong to a chatbot. <Link href="/chatbots/new">Create a chatbot</Link> first.
              </Empty>
            );
          }
          return (
            <>
              <label>
                Chatbot
                <select
                  value={bot.chatbot_id}
                  onChange={(event) =>
                    navigate(`/tools?chatbot=${(event.target as HTMLSelectElement).value}`, { replace: true })
                  }
                >
                  {chatbots.map((candidate) => (
                    <option key={candidate.chatbot_id} value={candidate.chatbot_id}>
                      {candidate.name}
                    </option>
                  ))}
                </select>
              </label>
              <ChatbotTools key={bot.chatbot_id} chatbotId={bot.chatbot_id} />
            </>
          );
        }}
      </Loaded>
    </>
  );
}

/** A chatbot's tools: each with Edit, Test and Delete, then the form that adds one. */
export function ChatbotTools({ chatbotId }: { chatbotId: string }) {
  const [state, reload] = useLoad(
    () =>
      Promise.all([
        must(api.GET("/manage/chatbots/{chatbot_id}/tools", { params: { path: { chatbot_id: chatbotId } } })),
        must(api.GET("/manage/tool-templates")),
      ]),
    [chatbotId],
  );
  return (
    <Loaded state={state} retry={reload}>
      {([{ tools }, { templates }]) => (
        <>
          {tools.length === 0 ? (
            <Empty>No tools on this chatbot yet.{canWrite.value ? " Add one below." : ""}</Empty>
          ) : (
            tools.map((tool) => (
              <ToolCard
                key={tool.tool_id}
                tool={tool}
                template={templates.find((candidate) => candidate.kind === tool.kind)}
                onChanged={reload}
              />
            ))
          )}
          {canWrite.value && tools.length < 10 && (
            <AddTool chatbotId={chatbotId} templates={templates} onAdded={reload} />
          )}
        </>
      )}
    </Loaded>
  );
}

function ToolCard({
  tool,
  template,
  onChanged,
}: {
  tool: Tool;
  template: Template | undefined;
  onChanged: () => void;
}) {
  const [open, setOpen] = useState<"test" | "edit" | null>(null);
  const [saved, setSaved] = useState(false);
  const toggle = (panel: "test" | "edit") => {
    setSaved(false);
    setOpen(open === panel ? null : panel);
  };
  return (
    <article aria-labelledby={`tool-${tool.tool_id}`}>
      <header class="page-header">
        <div>
          <h2 id={`tool-${tool.tool_id}`}>
            {tool.name} <Badge tone="info">{tool.platform}</Badge>
          </h2>
          <p class="intro">{tool.description}</p>
        </div>
        {canWrite.value && (
          <div class="actions">
            <button
              type="button"
              class="small"
              aria-expanded={open === "test"}
              onClick={() => toggle("test")}
            >
              {open === "test" ? "Close test" : "Test"}
              <span class="visually-hidden"> {tool.name}</span>
            </button>
            <button
              type="button"
              class="secondary small"
              aria-expanded={open === "edit"}
              onClick={() => toggle("edit")}
            >
              {open === "edit" ? "Close editing" : "Edit"}
              <span class="visually-hidden"> {tool.name}</span>
            </button>
            <ConfirmButton
              label="Delete"
              labelDetail={tool.name}
              question={`Delete the tool “${tool.name}”?`}
              detail="The chatbot stops using it at once; its credentials are deleted."
              confirmLabel="Delete tool"
              onConfirm={async () => {
                await must(
                  api.DELETE("/manage/chatbots/{chatbot_id}/tools/{tool_id}", {
                    params: { path: { chatbot_id: tool.chatbot_id, tool_id: tool.tool_id } },
                  }),
                );
                onChanged();
              }}
            />
          </div>
        )}
      </header>
      <dl class="facts">
        <dt>The chatbot collects</dt>
        <dd>{tool.variables.map((variable) => variable.label).join(", ")}</dd>
        <dt>Credentials</dt>
        <dd>
          {Object.entries(tool.credentials).map(([name, hint]) => (
            <span key={name}>
              {labelOf(name)} <code>{String(hint)}</code>{" "}
            </span>
          ))}
        </dd>
        <dt>Requests per minute</dt>
        <dd>{tool.requests_per_minute}</dd>
        <dt>Last changed</dt>
        <dd>{formatTime(tool.updated_at)}</dd>
      </dl>
      {saved && (
        <SuccessNotice>Saved: the chatbot uses the changed tool from its next look-up.</SuccessNotice>
      )}
      {open === "test" && <ToolTest tool={tool} />}
      {open === "edit" && template && (
        <EditTool
          tool={tool}
          template={template}
          onSaved={() => {
            setOpen(null);
            setSaved(true);
            onChanged();
          }}
        />
      )}
    </article>
  );
}

/** The settings as the form holds them: each field by its template type (JSON for objects and lists). */
function configFromForm(
  values: Record<string, string>,
  properties: Record<string, SchemaField>,
): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(properties)) {
    const raw = values[`config.${name}`];
    if (field.type === "boolean") config[name] = raw === "on";
    else if (field.type === "object" || field.type === "array") {
      if (raw?.trim()) {
        try {
          config[name] = JSON.parse(raw);
        } catch {
          throw new Error(`${labelOf(name)} is not valid JSON.`);
        }
      }
    } else if (field.type === "integer" || field.type === "number") {
      if (raw?.trim()) config[name] = Number(raw);
    } else if (raw?.trim()) config[name] = raw.trim();
  }
  return config;
}

/**
 * Changes a tool: only what was changed is sent (`config` is merged into the stored settings by
 * the API). Credentials are replaced whole when any is entered, else kept.
 */
function EditTool({ tool, template, onSaved }: { tool: Tool; template: Template; onSaved: () => void }) {
  const action = useAction();
  const properties = (template.config.properties ?? {}) as Record<string, SchemaField>;
  const required = new Set((template.config.required as string[] | undefined) ?? []);
  const prefix = `edit-${tool.tool_id}`;
  return (
    <section aria-label={`Edit ${tool.name}`}>
      <h3>Edit {tool.name}</h3>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const values = formValues(event.currentTarget);
          await action.run(async () => {
            const changes: ToolChanges = {};
            const name = (values.name ?? "").trim();
            if (name && name !== tool.name) changes.name = name;
            const description = (values.description ?? "").trim();
            if (description !== tool.description) changes.description = description;
            const perMinute = Number(values.requests_per_minute);
            if (perMinute !== tool.requests_per_minute) changes.requests_per_minute = perMinute;
            const config = configFromForm(values, properties);
            const changedConfig = Object.fromEntries(
              Object.entries(config).filter(
                ([key, value]) => JSON.stringify(value) !== JSON.stringify(tool.config[key]),
              ),
            );
            if (Object.keys(changedConfig).length > 0) changes.config = changedConfig;
            const credentials: Record<string, string> = {};
            for (const credential of template.credentials) {
              const raw = values[`credentials.${credential.name}`];
              if (raw) credentials[credential.name] = raw;
            }
            if (Object.keys(credentials).length > 0) {
              const missing = template.credentials.filter(
                (credential) => credential.required && !credentials[credential.name],
              );
              if (missing.length > 0) {
                throw new Error(
                  `New credentials replace all the stored ones: enter ${missing.map((credential) => labelOf(credential.name)).join(" and ")} too.`,
                );
              }
              changes.credentials = credentials;
            }
            if (Object.keys(changes).length === 0) throw new Error("Nothing was changed.");
            await must(
              api.PATCH("/manage/chatbots/{chatbot_id}/tools/{tool_id}", {
                params: { path: { chatbot_id: tool.chatbot_id, tool_id: tool.tool_id } },
                body: changes,
              }),
            );
            onSaved();
          });
        }}
      >
        <label>
          Tool name
          <input
            name="name"
            required
            defaultValue={tool.name}
            pattern="^[a-zA-Z][a-zA-Z0-9_]{0,63}$"
            aria-describedby={`${prefix}-name-hint`}
          />
          <small id={`${prefix}-name-hint`}>The name a model calls it by; unique per chatbot.</small>
        </label>
        <label>
          Description
          <textarea
            name="description"
            rows={3}
            maxLength={1000}
            defaultValue={tool.description}
            aria-describedby={`${prefix}-description-hint`}
          />
          <small id={`${prefix}-description-hint`}>
            What the model is told about the tool. Empty: the template's own.
          </small>
        </label>
        <label>
          Requests per minute
          <input
            name="requests_per_minute"
            type="number"
            min={1}
            max={600}
            step={1}
            required
            defaultValue={tool.requests_per_minute}
          />
        </label>
        <h4>{template.kind === "http_get" ? "Generic GET" : template.platform} settings</h4>
        {Object.entries(properties).map(([name, field]) => (
          <ConfigField
            key={name}
            idPrefix={prefix}
            name={name}
            field={field}
            required={required.has(name)}
            current={tool.config[name]}
          />
        ))}
        <h4>Replace credentials</h4>
        <p class="intro">
          Leave these empty to keep the stored credentials. Entering any replaces them all: enter every
          required one.
        </p>
        {template.credentials.map((credential) => (
          <label key={credential.name}>
            New {labelOf(credential.name).charAt(0).toLowerCase() + labelOf(credential.name).slice(1)}
            {credential.required ? "" : " (optional)"}
            <input
              type="password"
              name={`credentials.${credential.name}`}
              autocomplete="off"
              placeholder={tool.credentials[credential.name] ?? hintOf(credential.name)}
            />
          </label>
        ))}
        {action.error !== null && <ErrorNotice error={action.error} />}
        <SubmitButton action={action}>Save {tool.name}</SubmitButton>
      </form>
    </section>
  );
}

function ToolTest({ tool }: { tool: Tool }) {
  const action = useAction();
  const [result, setResult] = useState<TestResult | null>(null);
  return (
    <section aria-label={`Test ${tool.name}`}>
      <h3>Test with sample values</h3>
      <p class="intro">
        Calls the platform once, exactly as a conversation would (credentials are redacted below).
      </p>
      <form
        class="filters"
        onSubmit={async (event) => {
          event.preventDefault();
          const values = formValues(event.currentTarget);
          await action.run(async () => {
            setResult(
              await must(
                api.POST("/manage/chatbots/{chatbot_id}/tools/{tool_id}/test", {
                  params: { path: { chatbot_id: tool.chatbot_id, tool_id: tool.tool_id } },
                  body: { values },
                }),
              ),
            );
          });
        }}
      >
        {tool.variables.map((variable) => (
          <label key={variable.name}>
            {variable.label.charAt(0).toUpperCase() + variable.label.slice(1)}
            <input name={variable.name} required />
          </label>
        ))}
        <SubmitButton action={action}>Run test</SubmitButton>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
      {result && (
        <div class="test-result" role="status">
          <p>
            Outcome: <Badge tone={resultTone(result.result)}>{result.result.replace("_", " ")}</Badge> in{" "}
            {result.duration_ms} ms. {result.verdict}
          </p>
          <details open>
            <summary>What the chatbot would answer</summary>
            <blockquote>{result.scripted_reply}</blockquote>
          </details>
          <details>
            <summary>What a model would be given</summary>
            <pre class="command">
              <code>{JSON.stringify(result.model_sees, null, 2)}</code>
            </pre>
          </details>
          <details>
            <summary>Requests sent ({result.requests.length})</summary>
            <ul>
              {result.requests.map((request, index) => (
                <li key={`${request.url}-${index}`}>
                  <code>
                    {request.method} {request.url}
                  </code>{" "}
                  → {request.status ?? request.outcome}
                </li>
              ))}
            </ul>
          </details>
        </div>
      )}
    </section>
  );
}

/** The http_get template's variables: one order number to start from. */
const genericVariables = [
  {
    name: "order_number",
    label: "order number",
    description: "The order number exactly as the visitor typed it.",
    kind: "order_number",
  },
];

function AddTool({
  chatbotId,
  templates,
  onAdded,
}: {
  chatbotId: string;
  templates: Template[];
  onAdded: () => void;
}) {
  const [kind, setKind] = useState<string>(templates[0]?.kind ?? "");
  const template = templates.find((candidate) => candidate.kind === kind);
  const action = useAction();
  const properties = (template?.config.properties ?? {}) as Record<string, SchemaField>;
  const required = new Set((template?.config.required as string[] | undefined) ?? []);
  return (
    <article aria-labelledby="add-tool-title">
      <h2 id="add-tool-title">Add a tool</h2>
      <fieldset class="templates">
        <legend>Platform</legend>
        {templates.map((candidate) => (
          <label key={candidate.kind}>
            <input
              type="radio"
              name="template"
              value={candidate.kind}
              checked={candidate.kind === kind}
              onChange={() => {
                action.clear();
                setKind(candidate.kind);
              }}
            />
            {candidate.kind === "http_get" ? "Generic GET" : candidate.platform}
          </label>
        ))}
      </fieldset>
      {template && (
        <form
          key={template.kind}
          onSubmit={async (event) => {
            event.preventDefault();
            const form = event.currentTarget;
            const values = formValues(form);
            await action.run(async () => {
              const config = configFromForm(values, properties);
              const credentials: Record<string, string> = {};
              for (const credential of template.credentials) {
                const raw = values[`credentials.${credential.name}`];
                if (raw) credentials[credential.name] = raw;
              }
              const name = values.name?.trim();
              const description = values.description?.trim();
              await must(
                api.POST("/manage/chatbots/{chatbot_id}/tools", {
                  params: { path: { chatbot_id: chatbotId } },
                  body: {
                    kind: template.kind as ToolKind,
                    config,
                    credentials,
                    ...(name ? { name } : {}),
                    ...(description ? { description } : {}),
                  },
                }),
              );
              form.reset();
              onAdded();
            });
          }}
        >
          <p>
            The chatbot asks the visitor for{" "}
            <strong>
              {template.variables.map((variable) => variable.label).join(" and ") || "the details you define"}
            </strong>{" "}
            before it looks anything up.{template.variables_note ? ` ${template.variables_note}` : ""}
          </p>
          <h3>{template.kind === "http_get" ? "Generic GET" : template.platform} settings</h3>
          {Object.entries(properties).map(([name, field]) => (
            <ConfigField key={name} idPrefix="add" name={name} field={field} required={required.has(name)} />
          ))}
          <h3>Credentials</h3>
          <p class="intro">Write-only: stored encrypted, never shown again.</p>
          {template.credentials.map((credential) => (
            <label key={credential.name}>
              {labelOf(credential.name)}
              {credential.required ? "" : " (optional)"}
              <input
                type="password"
                name={`credentials.${credential.name}`}
                required={credential.required}
                autocomplete="off"
                placeholder={hintOf(credential.name)}
              />
            </label>
          ))}
          <details>
            <summary>Name and description (optional)</summary>
            <label>
              Tool name
              <input
                name="name"
                placeholder={`lookup_${template.kind}`}
                pattern="^[a-zA-Z][a-zA-Z0-9_-]{0,63}$"
              />
              <small>The name a model calls it by; unique per chatbot.</small>
            </label>
            <label>
              Description
              <input name="description" maxLength={1000} />
            </label>
          </details>
          {action.error !== null && <ErrorNotice error={action.error} />}
          <SubmitButton action={action}>
            Add {template.kind === "http_get" ? "generic GET" : template.platform} tool
          </SubmitButton>
        </form>
      )}
    </article>
  );
}

function ConfigField({
  idPrefix,
  name,
  field,
  required,
  current,
}: {
  idPrefix: string;
  name: string;
  field: SchemaField;
  required: boolean;
  /** The tool's current value (editing); else the template's default. */
  current?: unknown;
}) {
  const id = `${idPrefix}-config-${name}`;
  const hint = hintOf(name);
  const value = current ?? field.default;
  if (field.type === "boolean") {
    return (
      <label>
        <input type="checkbox" name={`config.${name}`} defaultChecked={value === true} />
        {labelOf(name)}
      </label>
    );
  }
  if (field.enum) {
    return (
      <label>
        {labelOf(name)}
        <select name={`config.${name}`} aria-describedby={hint ? `${id}-hint` : undefined}>
          {field.enum.map((option) => (
            <option key={option} selected={option === String(value ?? field.enum?.[0])}>
              {option}
            </option>
          ))}
        </select>
        {hint && <small id={`${id}-hint`}>{hint}</small>}
      </label>
    );
  }
  if (field.type === "object" || field.type === "array") {
    const example =
      current ??
      (name === "variables" ? genericVariables : (field.default ?? (field.type === "array" ? [] : {})));
    return (
      <label>
        {labelOf(name)} (JSON){required ? "" : " (optional)"}
        <textarea
          name={`config.${name}`}
          rows={name === "variables" ? 6 : 2}
          required={required}
          class="mono"
        >
          {JSON.stringify(example, null, 2)}
        </textarea>
      </label>
    );
  }
  const numeric = field.type === "integer" || field.type === "number";
  return (
    <label>
      {labelOf(name)}
      {required ? "" : " (optional)"}
      <input
        name={`config.${name}`}
        // (Preact types each input type apart; these are all text fields.)
        type={(numeric ? "number" : field.format === "uri" ? "url" : "text") as "text"}
        required={required}
        defaultValue={
          field.const ?? (typeof value === "string" || typeof value === "number" ? String(value) : "")
        }
        readOnly={field.const !== undefined}
        placeholder={hint}
        aria-describedby={hint ? `${id}-hint` : undefined}
      />
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </label>
  );
}
