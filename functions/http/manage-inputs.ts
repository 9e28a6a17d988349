/**
 * Request fields the management routes share, each with the bounds the domain enforces (and the
 * OpenAPI document publishes), so a bad value is a 422 naming the field before any work is done.
 */
import * as z from "zod/mini";
import { chatbotLimits } from "#functions/domain/chatbots";
import { MAX_RATE_LIMIT } from "#functions/domain/organizations";
import { memberLimits } from "#functions/domain/people";
import { uuid } from "#functions/http/schemas";

const text = (max: number, description: string, min = 1) =>
  z.string().check(z.minLength(min), z.maxLength(max), z.describe(description));

export const organizationName = z.string().check(
  z.minLength(1),
  z.maxLength(120),
  z.refine((value) => value.trim() !== "", "Name must not be blank"),
  z.describe("The organization's display name."),
);

export const rateLimit = z
  .int()
  .check(z.gte(1), z.lte(MAX_RATE_LIMIT), z.describe("Requests per minute per API key (token bucket)."));

export const subscription = z
  .enum(["active", "inactive"])
  .check(z.describe("`inactive`: the organization's API keys are refused (403) until it is active again."));

export const email = z
  .email()
  .check(z.maxLength(memberLimits.email), z.describe("The person's e-mail address: their sign-in name."));

export const displayName = z.optional(text(memberLimits.displayName, "Name shown in the console."));

export const role = z
  .enum(["admin", "viewer"])
  .check(
    z.describe(
      "`admin`: everything in the organization; `viewer`: conversations, usage and settings, read only.",
    ),
  );

/** Path parameters. */
export const chatbotIdParameter = uuid("The chatbot.");
export const conversationIdParameter = uuid("The conversation.");
export const toolIdParameter = uuid("The look-up tool.");
export const entryIdParameter = uuid("The knowledge entry.");
export const userIdParameter = uuid("The person (their user id, as listed by GET /manage/members).");
export const organizationIdParameter = uuid("The organization.");
export const contactIdParameter = uuid("The contact.");

// ---------- chatbot settings ----------

export const engineInput = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("scripted") }),
  z.object({
    kind: z.literal("bedrock"),
    model_id: text(
      256,
      "A Bedrock model or inference-profile id; the stage allows only the models its operator configured.",
    ),
  }),
  z.object({
    kind: z.literal("openai"),
    base_url: z.optional(
      z
        .url({ protocol: /^https?$/ })
        .check(
          z.maxLength(2_000),
          z.describe(
            "The OpenAI-compatible server, up to its version segment (`https://api.openai.com/v1`). An admin's choice unless the stage forbids custom model servers (then a platform operator's). Every call passes the outbound-address guard: public addresses only.",
          ),
        ),
    ),
    model: text(200, "The model name on that server."),
    api_key: z.optional(
      z.nullable(
        z
          .string()
          .check(
            z.minLength(1),
            z.maxLength(1_000),
            z.regex(/^[\x21-\x7E]+$/),
            z.describe(
              "The server's API key (write-only): sealed and never shown again, only a masked hint. `null` removes it. Kept while the server stays the same.",
            ),
          ),
      ),
    ),
    api_key_secret: z.optional(
      z.nullable(
        z
          .string()
          .check(
            z.regex(/^[A-Za-z0-9_.-]{1,100}$/),
            z.maxLength(100),
            z.describe(
              "Name of a secret of the stage holding the server's API key. Named by platform operators only.",
            ),
          ),
      ),
    ),
  }),
]);

export const chatbotSettings = {
  engine: engineInput,
  instructions: text(chatbotLimits.instructions, "The model's instructions (system prompt).", 0),
  welcome_message: text(chatbotLimits.welcomeMessage, "The scripted engine's answer to a greeting."),
  fallback_reply: text(
    chatbotLimits.fallbackReply,
    "Sent when the engine fails, is too slow, or (scripted) has no answer.",
  ),
  temperature: z
    .number()
    .check(z.gte(chatbotLimits.temperature.min), z.lte(chatbotLimits.temperature.max), z.describe("0–1.")),
  max_output_tokens: z
    .int()
    .check(z.gte(chatbotLimits.maxOutputTokens.min), z.lte(chatbotLimits.maxOutputTokens.max)),
  history_window: z
    .int()
    .check(
      z.gte(chatbotLimits.historyWindow.min),
      z.lte(chatbotLimits.historyWindow.max),
      z.describe("Earlier messages the model sees."),
    ),
};

/** A chatbot's human handoff: a PATCH changes the fields sent and keeps the others. */
const handoffInput = z
  .object({
    allowed: z.optional(
      z
        .boolean()
        .check(
          z.describe(
            "Whether the visitor (scripted phrases) or the model (`request_human` tool) may hand the conversation to a person. Clients and people always may.",
          ),
        ),
    ),
    message: z.optional(
      text(chatbotLimits.handoffMessage, "The chatbot's answer to the turn that starts a handoff."),
    ),
    phrases: z.optional(
      z
        .array(
          text(
            chatbotLimits.handoffPhrase,
            "A phrase, matched case-insensitively inside the visitor's message.",
          ),
        )
        .check(
          z.maxLength(chatbotLimits.handoffPhrases),
          z.describe("Scripted engine: visitor messages containing one of these ask for a person."),
        ),
    ),
  })
  .check(z.describe("Human handoff."));

export const chatbotHandoffSettings = {
  handoff: handoffInput,
  inactivity_timeout_minutes: z.nullable(
    z
      .int()
      .check(
        z.gte(chatbotLimits.inactivityTimeoutMinutes.min),
        z.lte(chatbotLimits.inactivityTimeoutMinutes.max),
        z.describe(
          "Close a conversation after this many minutes without a message or status change (cause `inactivity`); null: never.",
        ),
      ),
  ),
};

export const chatbotName = text(chatbotLimits.name, "The chatbot's display name.");
