/**
 * The agent side of a turn, assembled from the Lambda's environment: which engine a chatbot gets,
 * how attachments are read, where model API keys come from, and the chatbot's tools.
 *
 * Environment (set by the stack, or by the local runtime):
 *   BEDROCK_REGION                 region of Bedrock calls (default: AWS_REGION)
 *   AWS_ENDPOINT_URL_BEDROCK_RUNTIME  read by the SDK itself; the local runtime points it at a fake
 *   MODEL_STREAM_IDLE_MS           how long a streamed reply may send nothing before it counts as
 *                                  stalled (default 10 s; the test runtime shortens it)
 *   MODEL_SECRETS                  `secretsmanager:<prefix>` on the stack: a chatbot's `apiKeySecret`
 *                                  (an operator's) names a secret under that prefix. `local:<directory>`
 *                                  locally: the key is read from the environment variable
 *                                  MODEL_SECRET_<NAME> or the file <directory>/<name>.
 *   MODEL_KEYS_KEY_ID / _FILE      the key that opens the model API keys admins pasted (sealed in the
 *                                  chatbot item: agent/engine-options.ts); opened only to call the model
 *   OUTBOUND_ALLOW_PRIVATE         local runtime / tests only: loopback `address:port,…` of local fakes
 *                                  that images, look-ups and model calls may reach (net/outbound-address.ts)
 *   IMAGE_FETCH_CA_FILE            local runtime / tests only: a PEM CA trusted for image fetches
 *   TOOL_CREDENTIALS_KEY_ID        KMS key that seals look-up tool credentials (set by the stack)
 *   TOOL_CREDENTIALS_KEY_FILE      local runtime only: the key file used instead of KMS
 *   TOOL_HTTP_ORIGIN_OVERRIDES     local runtime only: platform origin → local fake (the sample shop)
 *   EMBEDDING_MODEL_ID             Bedrock embedding model of scripted and Bedrock chatbots
 *                                  (default amazon.titan-embed-text-v2:0, 256 dimensions)
 *   OPENAI_EMBEDDING_MODEL         embedding model an `openai` chatbot's server is asked for
 *                                  (default text-embedding-3-small, asked for 256 dimensions)
 *   EMBEDDING_SIMILARITY_BARS      `confident,relevant` cosine bars of the embedding model in use
 *                                  (default: the model's own, knowledge/embeddings.ts)
 * The local-only settings (all but IMAGE_FETCH_CA_FILE) are ignored on Lambda (net/outbound-address.ts
 * and tools/environment.ts say how).
 *
 * What a turn may not need is loaded on its first use, not when the Lambda starts: each engine (and
 * its SDK client), image fetching, the look-up tools with their key service, the secrets client. A
 * scripted chatbot's text turn loads none of it. Each is a chunk of its own in the function's bundle
 * (lib/bundling.ts), read from disk and run only when first imported.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import { type ChatEngine, emptyToolBox } from "#functions/agent/engine";
import type { ImageFetchOptions } from "#functions/agent/images";
import type { ChatbotBundle } from "#functions/domain/chatbots";
import type {
  AgentServices,
  AttachmentInput,
  EngineKeyOverride,
  ResolvedAttachment,
  ToolBoxRequest,
  TurnToolBox,
} from "#functions/domain/messages";
import { validationError } from "#functions/errors";
import type { Embedder } from "#functions/knowledge/embeddings";
import { TITAN_V2 } from "#functions/knowledge/models";
import type { Retriever } from "#functions/knowledge/retriever";
import type { OutboundSend } from "#functions/net/outbound-http";
import type { EnvelopeCipher, EnvelopeKey } from "#functions/secrets/envelope";
import { type Db, dbFromEnvironment } from "#functions/store/dynamodb";
import type { ChatbotRecord } from "#functions/store/items";
import type { ToolEnvironment } from "#functions/tools/environment";
import type { HttpGet } from "#functions/tools/http-get";
import type { SecretReader } from "#functions/tools/turn";

export interface AgentEnvironment {
  bedrockRegion: string;
  /** Milliseconds a streamed reply may send nothing before it is given up as stalled (engine default if absent). */
  streamIdleMs?: number;
  modelSecrets: { kind: "secretsmanager"; prefix: string } | { kind: "local"; directory: string };
  /** The key that opens admins' model API keys (absent: none configured). */
  modelKeys?: EnvelopeKey;
  imageFetch: Pick<ImageFetchOptions, "allowPrivate" | "trustedCa">;
  /** Replaces the look-up tools built from `tools` (tests). */
  toolBoxFor?: (request: ToolBoxRequest) => Promise<TurnToolBox>;
  /** Look-up tools' credential key and HTTP settings; absent means no tools. */
  tools?: ToolEnvironment;
  /** The table look-ups cache results and count requests in (default: the Lambda's). */
  db?: () => Db;
  /** Embedding models and their similarity bars. */
  embeddings: { bedrockModel: string; openAiModel: string; bars?: string };
}

/** Time kept after look-ups for the engine to answer: a model needs another round, the scripted engine none. */
function toolDeadline(request: ToolBoxRequest, now: number): number {
  const left = request.deadline - now;
  const reserve =
    request.bundle.chatbot.engine.kind === "scripted"
      ? Math.min(300, left * 0.1)
      : Math.min(5_000, left * 0.4);
  return Math.floor(request.deadline - reserve);
}

export async function agentEnvironment(env: NodeJS.ProcessEnv = process.env): Promise<AgentEnvironment> {
  const secrets = env.MODEL_SECRETS ?? "local:.local/secrets";
  const [kind, ...rest] = secrets.split(":");
  const location = rest.join(":");
  const streamIdleMs = Number(env.MODEL_STREAM_IDLE_MS);
  const [{ allowListFromEnvironment }, { toolEnvironment }, { engineOptionsFromEnvironment }] =
    await Promise.all([
      import("#functions/net/outbound-address"),
      import("#functions/tools/environment"),
      import("#functions/agent/engine-options"),
    ]);
  const { modelKeys } = engineOptionsFromEnvironment(env);
  return {
    bedrockRegion: env.BEDROCK_REGION ?? env.AWS_REGION ?? "us-east-1",
    ...(streamIdleMs > 0 ? { streamIdleMs } : {}),
    modelSecrets:
      kind === "secretsmanager" ? { kind, prefix: location } : { kind: "local", directory: location },
    imageFetch: { allowPrivate: allowListFromEnvironment(env) },
    tools: toolEnvironment(env),
    embeddings: {
      bedrockModel: env.EMBEDDING_MODEL_ID || TITAN_V2,
      openAiModel: env.OPENAI_EMBEDDING_MODEL || "text-embedding-3-small",
      ...(env.EMBEDDING_SIMILARITY_BARS ? { bars: env.EMBEDDING_SIMILARITY_BARS } : {}),
    },
    ...(modelKeys ? { modelKeys } : {}),
  };
}

export function agentServicesFromEnvironment(env: NodeJS.ProcessEnv = process.env): AgentServices {
  let environment: Promise<AgentEnvironment> | undefined;
  const environmentOnce = () => {
    environment ??= agentEnvironment(env);
    return environment;
  };
  let trustedCa: Promise<string | undefined> | undefined;
  const caFile = env.IMAGE_FETCH_CA_FILE;
  const imageOptions = async (): Promise<ImageFetchOptions> => {
    trustedCa ??= caFile ? readFile(caFile, "utf8") : Promise.resolve(undefined);
    const [ca, { imageFetch }] = await Promise.all([trustedCa, environmentOnce()]);
    return { ...imageFetch, ...(ca ? { trustedCa: ca } : {}) };
  };
  return createAgentServices(environmentOnce, imageOptions);
}

export function createAgentServices(
  environmentOf: () => Promise<AgentEnvironment>,
  imageOptions: () => Promise<ImageFetchOptions> = async () => (await environmentOf()).imageFetch,
): AgentServices {
  let bedrock: BedrockRuntimeClient | undefined;
  let secrets: ((name: string) => Promise<string>) | undefined;
  let modelKeys:
    | ((envelope: string, owner: { organizationId: string; chatbotId: string }) => Promise<string>)
    | undefined;
  let modelHttp: OutboundSend | undefined;
  let toolHttp: HttpGet | undefined;
  let toolSecrets: SecretReader | undefined;
  const embedders = new Map<string, Embedder>();
  let retriever: Retriever | undefined;
  const bedrockClient = async (environment: AgentEnvironment) => {
    if (!bedrock) {
      const { createBedrockClient } = await import("#functions/agent/bedrock-engine");
      bedrock = createBedrockClient({ region: environment.bedrockRegion });
    }
    return bedrock;
  };
  /** The one guarded client of every model request (chat and embeddings), pooled per instance. */
  const modelClient = async (environment: AgentEnvironment): Promise<OutboundSend> => {
    if (!modelHttp) {
      const { createOutboundClient } = await import("#functions/net/outbound-http");
      modelHttp ??= createOutboundClient({
        allowPrivate: environment.imageFetch.allowPrivate ?? [],
        keepAlive: true,
      });
    }
    return modelHttp;
  };
  /** An openai engine's key: the one given (an engine test's), the admin's pasted one, or an operator's secret; else none. */
  const modelKeyOf = async (
    chatbot: ChatbotRecord,
    environment: AgentEnvironment,
    options: EngineKeyOverride = {},
  ): Promise<string> => {
    const { engine } = chatbot;
    if (engine.kind !== "openai") return "";
    if (options.apiKey !== undefined) return options.apiKey;
    if (engine.apiKey !== undefined) {
      modelKeys ??= modelKeyOpener(environment.modelKeys);
      return modelKeys(engine.apiKey, {
        organizationId: chatbot.organizationId,
        chatbotId: chatbot.chatbotId,
      });
    }
    if (engine.apiKeySecret !== undefined) {
      secrets ??= modelSecretReader(environment.modelSecrets);
      return secrets(engine.apiKeySecret);
    }
    // No key: the server needs none, and the engine then sends no Authorization.
    return "";
  };
  /** The chatbot's embedder: its own OpenAI-compatible server's, else Bedrock's; one per instance and configuration. */
  const embedderFor = async (chatbot: ChatbotRecord): Promise<Embedder> => {
    const environment = await environmentOf();
    const { embeddings } = environment;
    // A pasted key is named by its envelope (a changed key is a new one), an operator's by its secret.
    const key =
      chatbot.engine.kind === "openai"
        ? `openai ${chatbot.engine.baseUrl} ${chatbot.engine.apiKey ?? ""} ${chatbot.engine.apiKeySecret ?? ""} ${embeddings.openAiModel}`
        : `bedrock ${embeddings.bedrockModel}`;
    const found = embedders.get(key);
    if (found) return found;
    const { createOpenAiEmbedder, createTitanEmbedder, similarityBars } = await import(
      "#functions/knowledge/embeddings"
    );
    let embedder: Embedder;
    if (chatbot.engine.kind === "openai") {
      const model = embeddings.openAiModel;
      embedder = createOpenAiEmbedder({
        baseUrl: chatbot.engine.baseUrl,
        apiKey: await modelKeyOf(chatbot, environment),
        send: await modelClient(environment),
        model,
        // Only OpenAI's text-embedding-3 models can shorten their vectors; others give their own size.
        ...(model.startsWith("text-embedding-3") ? { dimensions: 256 } : {}),
        bars: similarityBars(model, embeddings.bars),
      });
    } else {
      embedder = createTitanEmbedder({
        client: await bedrockClient(environment),
        model: embeddings.bedrockModel,
        bars: similarityBars(embeddings.bedrockModel, embeddings.bars),
      });
    }
    embedders.set(key, embedder);
    return embedder;
  };
  return {
    knowledgeIndexed(organizationId, chatbotId) {
      return retriever?.has(organizationId, chatbotId) ?? false;
    },
    async retrieve(request) {
      const { chatbot } = request.bundle;
      if (!retriever) {
        const [{ createRetriever }, { readEntryKnowledge }, { contextFromEnvironment }] = await Promise.all([
          import("#functions/knowledge/retriever"),
          import("#functions/knowledge/entry-passages"),
          import("#functions/domain/context"),
        ]);
        const environment = await environmentOf();
        const ctx = environment.db
          ? { db: environment.db(), clock: Date.now }
          : contextFromEnvironment("turn");
        retriever ??= createRetriever((organizationId, chatbotId, version) =>
          readEntryKnowledge(ctx, organizationId, chatbotId, version),
        );
      }
      const version = chatbot.knowledgeVersion ?? 0;
      const hasPassages = version > 0 || (request.bundle.knowledge?.passages.length ?? 0) > 0;
      return retriever.retrieve({
        organizationId: chatbot.organizationId,
        chatbotId: chatbot.chatbotId,
        version,
        question: request.question,
        // No passages: no embedding call either.
        embedder: hasPassages ? await embedderFor(chatbot) : undefined,
        ...(request.limit ? { limit: request.limit } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
        ...(request.bundle.knowledge ? { preloaded: request.bundle.knowledge } : {}),
      });
    },
    async resolveAttachments(attachments, signal) {
      // Nothing to read: image fetching need not even load.
      if (attachments.length === 0) return [];
      return resolveAttachments(attachments, { ...(await imageOptions()), signal });
    },
    async engineFor(bundle: ChatbotBundle, options: EngineKeyOverride = {}): Promise<ChatEngine> {
      const { chatbot } = bundle;
      const environment = await environmentOf();
      switch (chatbot.engine.kind) {
        case "scripted": {
          const [{ createScriptedEngine }, { lookupHook }] = await Promise.all([
            import("#functions/agent/scripted-engine"),
            import("#functions/agent/lookup-hook"),
          ]);
          return createScriptedEngine({
            welcomeMessage: chatbot.welcomeMessage,
            fallbackReply: chatbot.fallbackReply,
            ...(bundle.tools.length > 0 ? { hook: lookupHook } : {}),
          });
        }
        case "bedrock": {
          const { createBedrockEngine } = await import("#functions/agent/bedrock-engine");
          return createBedrockEngine({
            client: await bedrockClient(environment),
            modelId: chatbot.engine.modelId,
            ...(environment.streamIdleMs ? { streamIdleMs: environment.streamIdleMs } : {}),
          });
        }
        case "openai": {
          const { createOpenAiEngine } = await import("#functions/agent/openai-engine");
          // Every model request goes through the address guard, one pooled client per instance.
          const [send, apiKey] = await Promise.all([
            modelClient(environment),
            modelKeyOf(chatbot, environment, options),
          ]);
          return createOpenAiEngine({
            baseUrl: chatbot.engine.baseUrl,
            model: chatbot.engine.model,
            ...(environment.streamIdleMs ? { streamIdleMs: environment.streamIdleMs } : {}),
            apiKey,
            send,
          });
        }
      }
    },
    async toolBoxFor(request): Promise<TurnToolBox> {
      const environment = await environmentOf();
      if (environment.toolBoxFor) return environment.toolBoxFor(request);
      const settings = environment.tools;
      if (!settings || request.bundle.tools.length === 0) return emptyToolBox;
      const [{ createHttpGet }, { envelopeCipherFor }, { createSecretReader, createTurnToolBox }] =
        await Promise.all([
          import("#functions/tools/http-get"),
          import("#functions/secrets/envelope"),
          import("#functions/tools/turn"),
        ]);
      toolHttp ??= createHttpGet(settings.http);
      toolSecrets ??= createSecretReader(envelopeCipherFor(settings.credentialKey));
      const box = createTurnToolBox(
        {
          organizationId: request.organizationId,
          chatbotId: request.bundle.chatbot.chatbotId,
          conversationId: request.conversation.conversationId,
          toolItems: request.bundle.tools,
          visitorTexts: request.visitorTexts,
          ...(request.conversation.collected ? { collected: request.conversation.collected } : {}),
          deadline: toolDeadline(request, Date.now()),
        },
        {
          db: environment.db ? environment.db() : dbFromEnvironment("turn"),
          clock: Date.now,
          http: toolHttp,
          secrets: toolSecrets,
        },
      );
      return box ?? emptyToolBox;
    },
  };
}

async function resolveAttachments(
  attachments: readonly AttachmentInput[],
  options: ImageFetchOptions,
): Promise<ResolvedAttachment[]> {
  const { AttachmentError, resolveImageAttachments } = await import("#functions/agent/images");
  try {
    const images = await resolveImageAttachments(attachments, options);
    return images.map((image, index) => {
      const source = attachments[index];
      const stored =
        source && "url" in source
          ? { type: "image" as const, url: source.url, media_type: image.mediaType }
          : {
              type: "image" as const,
              media_type: image.mediaType,
              sha256: createHash("sha256").update(image.bytes).digest("hex"),
              size: image.bytes.byteLength,
            };
      return { image, stored };
    });
  } catch (error) {
    if (!(error instanceof AttachmentError)) throw error;
    const source = attachments[error.index];
    const field = source && "url" in source ? "url" : "data";
    throw validationError([
      {
        type: "value_error",
        loc: ["body", "attachments", error.index, field],
        msg: `Value error, ${error.message.replace(/^Attachment \d+: /, "")}`,
        input: field === "url" && source && "url" in source ? source.url : "<base64 data>",
        ctx: { error: error.failure },
      },
    ]);
  }
}

/**
 * Opens the model API keys admins pasted (sealed envelopes bound to organization and chatbot),
 * caching each opened key 5 minutes by its envelope, so a busy chatbot costs one KMS call per
 * instance every few minutes rather than one per turn. A changed key is a new envelope.
 */
function modelKeyOpener(
  key: EnvelopeKey | undefined,
): (envelope: string, owner: { organizationId: string; chatbotId: string }) => Promise<string> {
  const cache = new Map<string, { value: Promise<string>; until: number }>();
  let cipher: Promise<EnvelopeCipher | undefined> | undefined;
  return (envelope, owner) => {
    const now = Date.now();
    const cached = cache.get(envelope);
    if (cached && cached.until > now) return cached.value;
    cipher ??= import("#functions/secrets/envelope").then(({ envelopeCipherFor }) => envelopeCipherFor(key));
    const value = cipher.then((opener) => {
      if (!opener) throw new Error("no key is configured to open model API keys");
      return opener.decrypt(envelope, owner);
    });
    value.catch(() => cache.delete(envelope));
    for (const [stale, entry] of cache) if (entry.until <= now) cache.delete(stale);
    cache.set(envelope, { value, until: now + 5 * 60_000 });
    return value;
  };
}

/** Model API keys by name: Secrets Manager on the stack, environment or files locally. Cached 5 minutes. */
function modelSecretReader(source: AgentEnvironment["modelSecrets"]): (name: string) => Promise<string> {
  const cache = new Map<string, { value: Promise<string>; until: number }>();
  const read = async (name: string): Promise<string> => {
    if (source.kind === "secretsmanager") {
      const { readSecretString } = await import("#functions/agent/model-secrets");
      return readSecretString(`${source.prefix}${name}`);
    }
    const fromEnvironment = process.env[`MODEL_SECRET_${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`];
    if (fromEnvironment !== undefined) return fromEnvironment;
    if (!/^[\w.-]+$/.test(name)) throw new Error(`model secret name ${name} is not a plain file name`);
    return (await readFile(join(source.directory, name), "utf8")).trim();
  };
  return (name) => {
    const now = Date.now();
    const cached = cache.get(name);
    if (cached && cached.until > now) return cached.value;
    const value = read(name);
    value.catch(() => cache.delete(name));
    cache.set(name, { value, until: now + 5 * 60_000 });
    return value;
  };
}
