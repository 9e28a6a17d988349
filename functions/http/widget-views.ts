/**
 * The website widget's settings as the management API takes and shows them, and the session
 * route's answer, with the bounds the domain enforces (published in the OpenAPI document).
 */
import * as z from "zod/mini";
import type { WidgetView } from "#functions/domain/widget-settings";
import { normalizeAllowedOrigin, widgetLimits } from "#functions/domain/widget-settings";
import { isoTimestamp } from "#functions/http/schemas";
import type { WidgetAppearance } from "#functions/store/items";

const identityVerification = z
  .enum(["off", "optional", "required"])
  .check(
    z.describe(
      "`off`: identity tokens are ignored; `optional`: a valid one identifies the visitor, a bad one is refused (401); `required`: a session without a valid one is refused (401).",
    ),
  );

const language = z
  .string()
  .check(
    z.maxLength(widgetLimits.languageLength),
    z.regex(/^(auto|[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*)$/, "Use auto or a BCP 47 language tag"),
    z.describe(
      "`auto`: the host page's `lang`; or a BCP 47 tag. The widget speaks English, German, French, Spanish and Dutch; other languages fall back to English.",
    ),
  );

const appearanceFields = {
  title: z
    .string()
    .check(
      z.maxLength(widgetLimits.titleLength),
      z.describe("The panel's title; empty: the chatbot's name."),
    ),
  color: z
    .string()
    .check(
      z.maxLength(7),
      z.regex(/^#[0-9a-fA-F]{6}$/, "Use a colour as #rrggbb"),
      z.describe("The accent colour, `#rrggbb`."),
    ),
  position: z.enum(["right", "left"]).check(z.describe("Which lower corner the launcher sits in.")),
  launcher_label: z
    .string()
    .check(
      z.maxLength(widgetLimits.launcherLabelLength),
      z.describe("The launcher's text; empty: the widget's own word for Chat, in the visitor's language."),
    ),
  starter_questions: z
    .array(z.string().check(z.minLength(1), z.maxLength(widgetLimits.starterQuestionLength)))
    .check(
      z.maxLength(widgetLimits.starterQuestions),
      z.describe("Questions offered before the visitor's first message."),
    ),
  language,
};

export const appearanceView = z.object(appearanceFields);
const appearanceChanges = z.object({
  title: z.optional(appearanceFields.title),
  color: z.optional(appearanceFields.color),
  position: z.optional(appearanceFields.position),
  launcher_label: z.optional(appearanceFields.launcher_label),
  starter_questions: z.optional(appearanceFields.starter_questions),
  language: z.optional(language),
});

const allowedOrigin = z.pipe(
  z.string().check(
    z.maxLength(widgetLimits.originLength),
    z.refine(
      (value) => normalizeAllowedOrigin(value) !== undefined,
      "Use an origin such as https://shop.example, http://localhost:8080 or https://*.shop.example",
    ),
  ),
  z.transform((value: string) => normalizeAllowedOrigin(value) ?? value),
);

export const widgetChanges = z.object({
  enabled: z.optional(z.boolean().check(z.describe("Whether visitors may start sessions."))),
  allowed_origins: z.optional(
    z
      .array(allowedOrigin)
      .check(
        z.maxLength(widgetLimits.allowedOrigins),
        z.describe(
          "Pages that may start sessions: exact origins (`https://shop.example`, `http://localhost:8080`) or one leading wildcard label (`https://*.shop.example`, any one subdomain).",
        ),
      ),
  ),
  identity_verification: z.optional(identityVerification),
  appearance: z.optional(appearanceChanges),
  daily_message_budget: z.optional(
    z
      .int()
      .check(
        z.gte(0),
        z.lte(widgetLimits.maxDailyMessageBudget),
        z.describe(
          "Visitor messages the widget takes per UTC day; past it, visitors get a 429 until midnight UTC.",
        ),
      ),
  ),
});

export const widgetView = z.object({
  chatbot_id: z.string(),
  enabled: z.boolean(),
  allowed_origins: z.array(z.string()),
  identity_verification: identityVerification,
  appearance: appearanceView,
  daily_message_budget: z.int(),
  identity_secret_created_at: z.nullable(
    isoTimestamp("When the current identity secret was made; null: none yet"),
  ),
  previous_identity_secret_expires_at: z.nullable(
    isoTimestamp("While a rotated-out identity secret still verifies: when it stops"),
  ),
  updated_at: z.nullable(isoTimestamp("When the settings last changed; null: never set (the defaults)")),
});

export const toAppearanceView = (appearance: WidgetAppearance): z.input<typeof appearanceView> => ({
  title: appearance.title,
  color: appearance.color,
  position: appearance.position,
  launcher_label: appearance.launcherLabel,
  starter_questions: appearance.starterQuestions,
  language: appearance.language,
});

export const toWidgetView = (view: WidgetView): z.input<typeof widgetView> => ({
  chatbot_id: view.chatbotId,
  enabled: view.enabled,
  allowed_origins: view.allowedOrigins,
  identity_verification: view.identityVerification,
  appearance: toAppearanceView(view.appearance),
  daily_message_budget: view.dailyMessageBudget,
  identity_secret_created_at: view.identitySecretCreatedAt,
  previous_identity_secret_expires_at: view.previousIdentitySecretExpiresAt,
  updated_at: view.updatedAt,
});

/** The settings' changes as the domain takes them. */
export function toWidgetChanges(body: z.output<typeof widgetChanges>) {
  const appearance = body.appearance;
  return {
    ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
    ...(body.allowed_origins === undefined ? {} : { allowedOrigins: [...new Set(body.allowed_origins)] }),
    ...(body.identity_verification === undefined ? {} : { identityVerification: body.identity_verification }),
    ...(body.daily_message_budget === undefined ? {} : { dailyMessageBudget: body.daily_message_budget }),
    ...(appearance
      ? {
          appearance: {
            ...(appearance.title === undefined ? {} : { title: appearance.title }),
            ...(appearance.color === undefined ? {} : { color: appearance.color.toLowerCase() }),
            ...(appearance.position === undefined ? {} : { position: appearance.position }),
            ...(appearance.launcher_label === undefined ? {} : { launcherLabel: appearance.launcher_label }),
            ...(appearance.starter_questions === undefined
              ? {}
              : { starterQuestions: appearance.starter_questions }),
            ...(appearance.language === undefined ? {} : { language: appearance.language }),
          },
        }
      : {}),
  };
}
