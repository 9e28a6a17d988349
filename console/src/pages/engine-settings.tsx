/**
 * A chatbot's engine in its settings form: which engine, the Bedrock model from the stage's list,
 * or an OpenAI-compatible server with the business's own key (write-only: pasted, then shown
 * masked), and a test of the engine as the form stands before it is saved.
 */
import { useState } from "preact/hooks";
import { api, must, type paths } from "../api/client.ts";
import { canWrite, isOperator, organizationId } from "../lib/workspace.ts";
import { ErrorNotice, formValues, SuccessNotice, useAction, useLoad } from "../ui/kit.tsx";
import type { Chatbot } from "./chatbots.tsx";

type EngineBody = NonNullable<
  paths["/manage/chatbots/{chatbot_id}"]["patch"]["requestBody"]
>["content"]["application/json"]["engine"];
type EngineTest =
  paths["/manage/chatbots/{chatbot_id}/engine/test"]["post"]["responses"][200]["content"]["application/json"];
type EngineOptions = paths["/manage/engine-options"]["get"]["responses"][200]["content"]["application/json"];

const fieldNames = ["engine", "model_id", "model", "base_url", "api_key", "remove_api_key", "api_key_secret"];

/**
 * The engine the form asks for: `changed` says whether it differs from the saved one (then PATCH
 * sends it); `engine` is the whole engine as it would be saved (what a test tries).
 */
export function engineFromForm(
  values: Record<string, string>,
  bot: Chatbot,
): { engine: NonNullable<EngineBody>; changed: boolean } {
  const current = bot.engine;
  const kind = values.engine ?? "scripted";
  if (kind === "bedrock") {
    const modelId = (values.model_id ?? "").trim();
    return {
      engine: { kind: "bedrock", model_id: modelId },
      changed: current.kind !== "bedrock" || current.model_id !== modelId,
    };
  }
  if (kind === "openai") {
    const previous = current.kind === "openai" ? current : null;
    const model = (values.model ?? "").trim();
    const baseUrl = (values.base_url ?? "").trim();
    const key = (values.api_key ?? "").trim();
    const removeKey = values.remove_api_key === "on";
    const secret = values.api_key_secret === undefined ? undefined : values.api_key_secret.trim();
    const engine: NonNullable<EngineBody> = {
      kind: "openai",
      model,
      base_url: baseUrl,
      ...(key ? { api_key: key } : removeKey ? { api_key: null } : {}),
      // Only operators see (and may name) a key secret of the stage.
      ...(secret === undefined || key ? {} : { api_key_secret: secret || null }),
    };
    const changed =
      !previous ||
      previous.model !== model ||
      previous.base_url !== baseUrl ||
      key !== "" ||
      removeKey ||
      (secret !== undefined && (previous.api_key_secret ?? "") !== secret);
    return { engine, changed };
  }
  return { engine: { kind: "scripted" }, changed: current.kind !== "scripted" };
}

/** Empties the pasted key (and the remove box) once the form is saved. */
export function clearKeyFields(form: HTMLFormElement): void {
  const key = form.elements.namedItem("api_key");
  if (key instanceof HTMLInputElement) key.value = "";
  const remove = form.elements.namedItem("remove_api_key");
  if (remove instanceof HTMLInputElement) remove.checked = false;
}

export function EngineFields({ bot }: { bot: Chatbot }) {
  const [kind, setKind] = useState(bot.engine.kind);
  const [options] = useLoad(() => must(api.GET("/manage/engine-options")), [organizationId.value]);
  const offered: EngineOptions =
    options.status === "ready" ? options.data : { bedrock_models: [], custom_model_servers: false };
  const current = bot.engine;
  const openai = current.kind === "openai" ? current : null;
  const serverEditable = isOperator.value || offered.custom_model_servers;
  const bedrockIds = offered.bedrock_models.map((model) => model.model_id);
  const savedBedrock = current.kind === "bedrock" ? current.model_id : null;
  return (
    <>
      <label>
        Engine
        <select
          name="engine"
          value={kind}
          onChange={(event) =>
            setKind((event.target as HTMLSelectElement).value as Chatbot["engine"]["kind"])
          }
        >
          <option value="scripted">Scripted (no model)</option>
          <option value="bedrock">Amazon Bedrock</option>
          <option value="openai">OpenAI-compatible API (your own key)</option>
        </select>
        {kind === "scripted" && (
          <small>Answers greetings, questions its knowledge covers, and look-ups, without a model.</small>
        )}
      </label>
      {kind === "bedrock" && (
        <label>
          Bedrock model
          <select
            // Drawn again once the list arrives, so the saved model is the one selected.
            key={options.status}
            name="model_id"
            required
            defaultValue={savedBedrock ?? bedrockIds[0] ?? ""}
          >
            {savedBedrock && !bedrockIds.includes(savedBedrock) && (
              <option value={savedBedrock}>{savedBedrock} (no longer offered)</option>
            )}
            {bedrockIds.map((id) => (
              <option key={id} value={id}>
                {id}
              </option>
            ))}
          </select>
          <small>
            {bedrockIds.length === 0
              ? "This platform offers no Bedrock models yet: ask its operator."
              : "The models this platform's operator made available."}
          </small>
        </label>
      )}
      {kind === "openai" && (
        <>
          <label>
            Server base URL
            <input
              name="base_url"
              type="url"
              required
              defaultValue={openai?.base_url ?? ""}
              readOnly={!serverEditable}
              placeholder="https://api.openai.com/v1"
              aria-describedby="base-url-hint"
            />
            <small id="base-url-hint">
              {serverEditable
                ? "Up to its version segment. Only public addresses are reached."
                : "Set by the platform's operator."}
            </small>
          </label>
          <label>
            Model
            <input name="model" required defaultValue={openai?.model ?? ""} placeholder="gpt-4o-mini" />
          </label>
          <label>
            API key
            <input
              name="api_key"
              type="password"
              autocomplete="off"
              placeholder={
                openai?.api_key_hint ? "Paste a new key to replace the stored one" : "Paste the key"
              }
              aria-describedby="api-key-hint"
            />
            <small id="api-key-hint">
              {openai?.api_key_hint
                ? `A key is stored (${openai.api_key_hint}). It is never shown again.`
                : "Stored encrypted and never shown again. Leave empty for a server that needs no key."}{" "}
              Changing the server removes the stored key.
            </small>
          </label>
          {openai?.api_key_hint && (
            <label>
              <input name="remove_api_key" type="checkbox" /> Remove the stored key
            </label>
          )}
          {isOperator.value && (
            <label>
              Key secret name (operators)
              <input name="api_key_secret" defaultValue={openai?.api_key_secret ?? ""} />
              <small>A secret of the stage holding the key, instead of a pasted one.</small>
            </label>
          )}
        </>
      )}
      {canWrite.value && kind !== "scripted" && <EngineTestButton bot={bot} />}
    </>
  );
}

function EngineTestButton({ bot }: { bot: Chatbot }) {
  const test = useAction();
  const [result, setResult] = useState<EngineTest | null>(null);
  return (
    <div class="engine-test">
      <button
        type="button"
        class="secondary"
        aria-busy={test.busy}
        disabled={test.busy}
        onClick={(event) => {
          const form = (event.currentTarget as HTMLButtonElement).form;
          if (!form) return;
          const values = formValues(form);
          const asked = Object.fromEntries(
            fieldNames.flatMap((name) => (values[name] === undefined ? [] : [[name, values[name] ?? ""]])),
          );
          setResult(null);
          void test.run(async () => {
            setResult(
              await must(
                api.POST("/manage/chatbots/{chatbot_id}/engine/test", {
                  params: { path: { chatbot_id: bot.chatbot_id } },
                  body: { engine: engineFromForm(asked, bot).engine },
                }),
              ),
            );
          });
        }}
      >
        Test the engine
      </button>
      <div aria-live="polite">
        {test.error !== null && <ErrorNotice error={test.error} />}
        {result?.ok && (
          <SuccessNotice>
            The engine answered in {(result.latency_ms / 1000).toFixed(1)} s: “{result.reply}”
          </SuccessNotice>
        )}
        {result && !result.ok && result.error && (
          <p class="notice error" role="alert">
            The engine did not answer: {result.error.message}.
          </p>
        )}
      </div>
    </div>
  );
}
