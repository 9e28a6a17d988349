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
 *                                  names a secret under that prefix. `local:<directory>` locally: the
 *                                  key is read from the environment variable MODEL_SECRET_<NAME> or the
 *                                  file <directory>/<name>. Keys never live in the table.
 *   OUTBOUND_ALLOW_PRIVATE         local runtime / tests only: loopback `address:port,…` of local fakes
 *                                  that images and look-ups may reach (net/outbound-address.ts)
 *   IMAGE_FETCH_CA_FILE            local runtime / tests only: a PEM CA trusted for image fetches
 *   TOOL_CREDENTIALS_KEY_ID        KMS key that seals look-up tool credentials (set by the stack)
 *   TOOL_CREDENTIALS_KEY_FILE      local runtime only: the key file used instead of KMS
 *   TOOL_HTTP_ORIGIN_OVERRIDES     local runtime only: platform origin → local fake (the sample shop)
 * The local-only settings (all but IMAGE_FETCH_CA_FILE) are ignored on Lambda (net/outbound-address.ts
 * and tools/environment.ts say how).
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import { GetSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { createBedrockClient, createBedrockEngine } from "#functions/agent/bedrock-engine";
import { type ChatEngine, emptyToolBox } from "#functions/agent/engine";
import { AttachmentError, type ImageFetchOptions, resolveImageAttachments } from "#functions/agent/images";
import { lookupHook } from "#functions/agent/lookup-hook";
import { createOpenAiEngine } from "#functions/agent/openai-engine";
import { createScriptedEngine } from "#functions/agent/scripted-engine";
import { awsClientOptions } from "#functions/aws-clients";
import type { ChatbotBundle } from "#functions/domain/chatbots";
import type {
  AgentServices,
  AttachmentInput,
  ResolvedAttachment,
  ToolBoxRequest,
  TurnToolBox,
} from "#functions/domain/messages";
import { validationError } from "#functions/errors";
import { allowListFromEnvironment } from "#functions/net/outbound-address";
import { type Db, dbFromEnvironment } from "#functions/store/dynamodb";
import { credentialCipherFor, type ToolEnvironment, toolEnvironment } from "#functions/tools/environment";
import { createHttpGet, type HttpGet } from "#functions/tools/http-get";
import { createSecretReader, createTurnToolBox, type SecretReader } from "#functions/tools/turn";

export interface AgentEnvironment {
  bedrockRegion: string;
  /** Milliseconds a streamed reply may send nothing before it is given up as stalled (engine default if absent). */
  streamIdleMs?: number;
  modelSecrets: { kind: "secretsmanager"; prefix: string } | { kind: "local"; directory: string };
  imageFetch: Pick<ImageFetchOptions, "allowPrivate" | "trustedCa">;
  /** Replaces the look-up tools built from `tools` (tests). */
  toolBoxFor?: (request: ToolBoxRequest) => Promise<TurnToolBox>;
  /** Look-up tools' credential key and HTTP settings; absent means no tools. */
  tools?: ToolEnvironment;
  /** The table look-ups cache results and count requests in (default: the Lambda's). */
  db?: () => Db;
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

export function agentEnvironment(env: NodeJS.ProcessEnv = process.env): AgentEnvironment {
  const secrets = env.MODEL_SECRETS ?? "local:.local/secrets";
  const [kind, ...rest] = secrets.split(":");
  const location = rest.join(":");
  const streamIdleMs = Number(env.MODEL_STREAM_IDLE_MS);
  return {
    bedrockRegion: env.BEDROCK_REGION ?? env.AWS_REGION ?? "us-east-1",
    ...(streamIdleMs > 0 ? { streamIdleMs } : {}),
    modelSecrets:
      kind === "secretsmanager" ? { kind, prefix: location } : { kind: "local", directory: location },
    imageFetch: { allowPrivate: allowListFromEnvironment(env) },
    tools: toolEnvironment(env),
  };
}

export function agentServicesFromEnvironment(env: NodeJS.ProcessEnv = process.env): AgentServices {
  const environment = agentEnvironment(env);
  let trustedCa: Promise<string | undefined> | undefined;
  const caFile = env.IMAGE_FETCH_CA_FILE;
  const imageOptions = async (): Promise<ImageFetchOptions> => {
    trustedCa ??= caFile ? readFile(caFile, "utf8") : Promise.resolve(undefined);
    const ca = await trustedCa;
    return { ...environment.imageFetch, ...(ca ? { trustedCa: ca } : {}) };
  };
  return createAgentServices(environment, imageOptions);
}

export function createAgentServices(
  environment: AgentEnvironment,
  imageOptions: () => Promise<ImageFetchOptions> = async () => environment.imageFetch,
): AgentServices {
  let bedrock: BedrockRuntimeClient | undefined;
  const secrets = modelSecretReader(environment.modelSecrets);
  let toolHttp: HttpGet | undefined;
  let toolSecrets: SecretReader | undefined;
  return {
    async resolveAttachments(attachments, signal) {
      return resolveAttachments(attachments, { ...(await imageOptions()), signal });
    },
    async engineFor(bundle: ChatbotBundle): Promise<ChatEngine> {
      const { chatbot } = bundle;
      switch (chatbot.engine.kind) {
        case "scripted":
          return createScriptedEngine({
            welcomeMessage: chatbot.welcomeMessage,
            fallbackReply: chatbot.fallbackReply,
            knowledge: bundle.knowledge.map((entry) => {
              const { entryId, createdAt: _createdAt, ...content } = entry;
              return { id: entryId, ...content };
            }),
            ...(bundle.tools.length > 0 ? { hook: lookupHook } : {}),
          });
        case "bedrock":
          bedrock ??= createBedrockClient({ region: environment.bedrockRegion });
          return createBedrockEngine({
            client: bedrock,
            modelId: chatbot.engine.modelId,
            ...(environment.streamIdleMs ? { streamIdleMs: environment.streamIdleMs } : {}),
          });
        case "openai":
          return createOpenAiEngine({
            baseUrl: chatbot.engine.baseUrl,
            model: chatbot.engine.model,
            ...(environment.streamIdleMs ? { streamIdleMs: environment.streamIdleMs } : {}),
            // No secret named: the server needs no key, and the engine then sends no Authorization.
            apiKey:
              chatbot.engine.apiKeySecret === undefined ? "" : await secrets(chatbot.engine.apiKeySecret),
          });
      }
    },
    async toolBoxFor(request): Promise<TurnToolBox> {
      if (environment.toolBoxFor) return environment.toolBoxFor(request);
      const settings = environment.tools;
      if (!settings || request.bundle.tools.length === 0) return emptyToolBox;
      toolHttp ??= createHttpGet(settings.http);
      toolSecrets ??= createSecretReader(credentialCipherFor(settings.credentialKey));
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

/** Model API keys by name: Secrets Manager on the stack, environment or files locally. Cached 5 minutes. */
function modelSecretReader(source: AgentEnvironment["modelSecrets"]): (name: string) => Promise<string> {
  const cache = new Map<string, { value: Promise<string>; until: number }>();
  let client: SecretsManagerClient | undefined;
  const read = async (name: string): Promise<string> => {
    if (source.kind === "secretsmanager") {
      client ??= new SecretsManagerClient(awsClientOptions("keys"));
      const secret = await client.send(new GetSecretValueCommand({ SecretId: `${source.prefix}${name}` }));
      if (!secret.SecretString) throw new Error(`model secret ${name} has no string value`);
      return secret.SecretString.trim();
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
