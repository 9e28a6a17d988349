/** `chatbots …`, `knowledge …` and `conversations …`: what a chatbot is and knows, and closing a conversation. */

import { handoffDefaults } from "#functions/agent/handoff";
import {
  addKnowledgeEntry,
  type ChatbotSettings,
  createChatbot,
  getChatbot,
  listChatbots,
  listKnowledgeEntries,
  removeKnowledgeEntry,
  updateChatbot,
} from "#functions/domain/chatbots";
import { closeConversation } from "#functions/domain/conversations";
import { AppError } from "#functions/errors";
import type { ChatbotRecord, EngineConfig, HandoffSettings } from "#functions/store/items";
import {
  type Command,
  type CommandInput,
  notBoth,
  numberOption,
  optional,
  positional,
  repeated,
  required,
} from "./command.ts";

const settingOptions = {
  name: { type: "string" },
  instructions: { type: "string" },
  "welcome-message": { type: "string" },
  "fallback-reply": { type: "string" },
  temperature: { type: "string" },
  "max-output-tokens": { type: "string" },
  "history-window": { type: "string" },
  engine: { type: "string" },
  "model-id": { type: "string" },
  "base-url": { type: "string" },
  model: { type: "string" },
  "api-key-secret": { type: "string" },
  "no-api-key": { type: "boolean" },
  handoff: { type: "boolean" },
  "no-handoff": { type: "boolean" },
  "handoff-message": { type: "string" },
  "handoff-phrase": { type: "string", multiple: true },
  "no-handoff-phrases": { type: "boolean" },
  "inactivity-timeout": { type: "string" },
  "no-inactivity-timeout": { type: "boolean" },
} as const;

const settingHelp = {
  name: "Display name",
  instructions: "System prompt for model engines",
  "welcome-message": "Greeting (the scripted engine answers greetings with it)",
  "fallback-reply": "Reply when the engine fails, is slow, or has no answer",
  temperature: "0–1 (default 0.3)",
  "max-output-tokens": "16–8192 (default 800)",
  "history-window": "Earlier messages the model sees, 0–50 (default 20)",
  engine: "scripted | bedrock | openai",
  "model-id": "bedrock: model or inference-profile id (must be allowed by the stack's bedrockModelIds)",
  "base-url":
    "openai: the OpenAI-compatible base URL, e.g. https://api.openai.com/v1 or http://localhost:11434/v1",
  model: "openai: model name",
  "api-key-secret":
    "openai: name of the secret holding the API key, for servers that need one (Secrets Manager on AWS, MODEL_SECRET_<NAME> or .local/secrets/<name> locally); kept while --base-url stays the same",
  "no-api-key": "openai: the server needs no key (a local Ollama, say): drop the configured --api-key-secret",
  handoff: "Let the visitor and the model hand the conversation to a person (clients and people always may)",
  "no-handoff": "Do not let the visitor or the model hand the conversation to a person",
  "handoff-message": "The chatbot's answer to the turn that starts a handoff",
  "handoff-phrase":
    "Scripted engine: a visitor message containing this (any case) asks for a person (repeatable; replaces the list)",
  "no-handoff-phrases": "Clear the handoff phrases",
  "inactivity-timeout": "Close a conversation after this many minutes without activity, 1–43200",
  "no-inactivity-timeout": "Never close a conversation for inactivity",
};

/** Options that only mean something with --engine. */
const engineOptions = ["model-id", "base-url", "model", "api-key-secret", "no-api-key"] as const;

function engineFrom(input: CommandInput, current?: EngineConfig): EngineConfig | undefined {
  const kind = optional(input, "engine");
  if (kind === undefined) {
    const given = engineOptions.filter((option) => input.values[option] !== undefined);
    if (given.length > 0) {
      throw new AppError("invalid_argument", {
        detail: `${given.map((option) => `--${option}`).join(", ")} only apply with --engine`,
      });
    }
    return undefined;
  }
  switch (kind) {
    case "scripted":
      return { kind };
    case "bedrock":
      return {
        kind,
        modelId:
          optional(input, "model-id") ??
          (current?.kind === "bedrock" ? current.modelId : required(input, "model-id")),
      };
    case "openai": {
      const previous = current?.kind === "openai" ? current : undefined;
      const baseUrl = optional(input, "base-url") ?? previous?.baseUrl ?? required(input, "base-url");
      const model = optional(input, "model") ?? previous?.model ?? required(input, "model");
      const secret = optional(input, "api-key-secret");
      const noKey = input.values["no-api-key"] === true;
      notBoth(input, "api-key-secret", "no-api-key");
      // A key belongs to its server: it is kept only while the base URL stays the same. An admin's
      // pasted key (sealed) stays too, unless a secret replaces it or --no-api-key drops it.
      const sameServer = previous?.baseUrl === baseUrl;
      const apiKeySecret = secret ?? (noKey || !sameServer ? undefined : previous?.apiKeySecret);
      const pasted =
        secret === undefined && !noKey && sameServer && previous?.apiKey
          ? { apiKey: previous.apiKey, ...(previous.apiKeyHint ? { apiKeyHint: previous.apiKeyHint } : {}) }
          : {};
      return { kind, baseUrl, model, ...(apiKeySecret === undefined ? {} : { apiKeySecret }), ...pasted };
    }
    default:
      throw new AppError("invalid_argument", { detail: "--engine must be scripted, bedrock or openai" });
  }
}

/** Two options that say opposite things: at most one may be given. */
function eitherFlag(input: CommandInput, yes: string, no: string): boolean | undefined {
  notBoth(input, yes, no);
  return input.values[yes] === true ? true : input.values[no] === true ? false : undefined;
}

/** Handoff settings with the given options changed, the rest as they are (or the defaults). */
function handoffFrom(input: CommandInput, current?: HandoffSettings): HandoffSettings | undefined {
  const allowed = eitherFlag(input, "handoff", "no-handoff");
  const message = optional(input, "handoff-message");
  const phrases = repeated(input, "handoff-phrase");
  const clearPhrases = input.values["no-handoff-phrases"] === true;
  notBoth(input, "handoff-phrase", "no-handoff-phrases");
  if (allowed === undefined && message === undefined && phrases.length === 0 && !clearPhrases)
    return undefined;
  return {
    ...(current ?? handoffDefaults),
    ...(allowed === undefined ? {} : { allowed }),
    ...(message === undefined ? {} : { message }),
    ...(phrases.length > 0 ? { phrases } : clearPhrases ? { phrases: [] } : {}),
  };
}

function settingsFrom(input: CommandInput, current?: ChatbotRecord): Partial<ChatbotSettings> {
  const settings: Partial<ChatbotSettings> = {};
  const text = (option: string, field: "name" | "instructions" | "welcomeMessage" | "fallbackReply") => {
    const value = optional(input, option);
    if (value !== undefined) settings[field] = value;
  };
  text("name", "name");
  text("instructions", "instructions");
  text("welcome-message", "welcomeMessage");
  text("fallback-reply", "fallbackReply");
  const temperature = numberOption(input, "temperature");
  if (temperature !== undefined) settings.temperature = temperature;
  const maxOutputTokens = numberOption(input, "max-output-tokens");
  if (maxOutputTokens !== undefined) settings.maxOutputTokens = maxOutputTokens;
  const historyWindow = numberOption(input, "history-window");
  if (historyWindow !== undefined) settings.historyWindow = historyWindow;
  const engine = engineFrom(input, current?.engine);
  if (engine) settings.engine = engine;
  const handoff = handoffFrom(input, current?.handoff);
  if (handoff) settings.handoff = handoff;
  const timeout = numberOption(input, "inactivity-timeout");
  notBoth(input, "inactivity-timeout", "no-inactivity-timeout");
  if (timeout !== undefined) settings.inactivityTimeoutMinutes = timeout;
  // Absent means never: the update's merge writes the chatbot without it.
  else if (input.values["no-inactivity-timeout"] === true) settings.inactivityTimeoutMinutes = undefined;
  return settings;
}

export const chatbotCommands: Command[] = [
  {
    group: "chatbots",
    name: "create",
    summary: "Create a chatbot (scripted engine unless told otherwise).",
    options: { org: { type: "string" }, ...settingOptions },
    help: { org: "Organization id (required)", ...settingHelp, name: "Display name (required)" },
    run: (ctx, input) =>
      createChatbot(ctx, {
        organizationId: required(input, "org"),
        ...settingsFrom(input),
        name: required(input, "name"),
      }),
  },
  {
    group: "chatbots",
    name: "list",
    summary: "List an organization's chatbots.",
    options: { org: { type: "string" } },
    help: { org: "Organization id (required)" },
    run: (ctx, input) => listChatbots(ctx, required(input, "org")),
  },
  {
    group: "chatbots",
    name: "show",
    summary: "Show a chatbot's settings.",
    positionals: ["chatbotId"],
    options: { org: { type: "string" } },
    help: { org: "Organization id (required)" },
    run: (ctx, input) => getChatbot(ctx, required(input, "org"), positional(input, 0, "chatbotId")),
  },
  {
    group: "chatbots",
    name: "update",
    summary: "Change a chatbot's settings, e.g. point it at an OpenAI-compatible model in one command.",
    positionals: ["chatbotId"],
    options: { org: { type: "string" }, ...settingOptions },
    help: { org: "Organization id (required)", ...settingHelp },
    run: async (ctx, input) => {
      const organizationId = required(input, "org");
      const chatbotId = positional(input, 0, "chatbotId");
      const current = await getChatbot(ctx, organizationId, chatbotId);
      return updateChatbot(ctx, organizationId, chatbotId, settingsFrom(input, current));
    },
  },
  {
    group: "knowledge",
    name: "add",
    summary:
      "Add a question/answer pair (--question, --answer) or a text snippet (--text, --title) to a chatbot.",
    options: {
      org: { type: "string" },
      chatbot: { type: "string" },
      question: { type: "string" },
      answer: { type: "string" },
      text: { type: "string" },
      title: { type: "string" },
    },
    help: {
      org: "Organization id (required)",
      chatbot: "Chatbot id (required)",
      question: "Question (with --answer)",
      answer: "Answer (with --question)",
      text: "Snippet text",
      title: "Snippet title (optional)",
    },
    run: (ctx, input) => {
      const text = optional(input, "text");
      const title = optional(input, "title");
      const entry =
        text !== undefined
          ? { kind: "snippet" as const, text, ...(title === undefined ? {} : { title }) }
          : { kind: "qa" as const, question: required(input, "question"), answer: required(input, "answer") };
      return addKnowledgeEntry(ctx, {
        organizationId: required(input, "org"),
        chatbotId: required(input, "chatbot"),
        entry,
      });
    },
  },
  {
    group: "knowledge",
    name: "list",
    summary: "List a chatbot's knowledge entries.",
    options: { org: { type: "string" }, chatbot: { type: "string" } },
    help: { org: "Organization id (required)", chatbot: "Chatbot id (required)" },
    run: (ctx, input) => listKnowledgeEntries(ctx, required(input, "org"), required(input, "chatbot")),
  },
  {
    group: "knowledge",
    name: "remove",
    summary: "Remove a knowledge entry.",
    positionals: ["entryId"],
    options: { org: { type: "string" }, chatbot: { type: "string" } },
    help: { org: "Organization id (required)", chatbot: "Chatbot id (required)" },
    run: async (ctx, input) => {
      await removeKnowledgeEntry(ctx, {
        organizationId: required(input, "org"),
        chatbotId: required(input, "chatbot"),
        entryId: positional(input, 0, "entryId"),
      });
      return { removed: true };
    },
  },
  {
    group: "conversations",
    name: "close",
    summary: "Close a conversation: further messages get 409.",
    positionals: ["conversationId"],
    options: { org: { type: "string" } },
    help: { org: "Organization id (required)" },
    run: async (ctx, input) => {
      const closed = await closeConversation(ctx, {
        organizationId: required(input, "org"),
        conversationId: positional(input, 0, "conversationId"),
      });
      return { conversationId: closed.conversationId, status: closed.status };
    },
  },
];
