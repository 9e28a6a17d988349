/** The body of a knowledge entry (POST and PATCH): a question/answer pair or a text snippet. */

import * as z from "zod/mini";
import type { KnowledgeEntryInput } from "#functions/domain/chatbots";
import { chatbotLimits } from "#functions/domain/chatbots";

const text = (description: string) =>
  z.string().check(z.minLength(1), z.maxLength(chatbotLimits.knowledgeText), z.describe(description));

export const knowledgeBody = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("qa"),
    question: text("The question, as a visitor might ask it."),
    answer: text("The answer."),
  }),
  z.object({
    kind: z.literal("snippet"),
    title: z.optional(z.string().check(z.maxLength(200), z.describe("A title (optional)."))),
    text: text("A passage the chatbot may answer from."),
  }),
]);

export function knowledgeInputOf(body: z.output<typeof knowledgeBody>): KnowledgeEntryInput {
  return body.kind === "qa"
    ? { kind: "qa", question: body.question, answer: body.answer }
    : { kind: "snippet", text: body.text, ...(body.title ? { title: body.title } : {}) };
}
