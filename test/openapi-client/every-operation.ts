/**
 * A client of the published API, written the way an integrator writes one: types generated from
 * docs/openapi.json by openapi-typescript (`npm run openapi:client`) and calls made with openapi-fetch.
 * It is only type-checked (`npm run openapi:check`, part of `npm test`), never run: it fails to compile
 * when the document types a parameter or field differently from what the server accepts, or when an
 * operation of the document has no call here.
 */
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/api.ts";

const api = createClient<paths>({
  baseUrl: "https://api-v1.example.com",
  headers: { Authorization: "Bearer cbk_example" },
});

const conversationId = "4e182a9a-4425-4144-a4ba-d6998cd1143f";

/**
 * One parsed event of the stream (its `event:` name and its `data:` JSON), typed by the document:
 * the name tells the data's type apart, so each branch reads its own fields.
 */
type StreamEvent = components["schemas"]["MessageStreamEvent"];
export function onStreamEvent(event: StreamEvent): string {
  switch (event.event) {
    case "message.start":
      return `${event.data.conversation_id} ${event.data.message_id ?? "none"} ${event.data.status}`;
    case "message.delta":
      return event.data.text;
    case "message.end":
      return `${event.data.message_id} ${event.data.role} ${event.data.content} ${event.data.created_at}`;
    case "error":
      return event.data.detail;
  }
}

/** The console's client: the signed-in person's access token, and the organization acted on. */
const consoleApi = createClient<paths>({
  baseUrl: "https://api-v1.example.com",
  headers: { Authorization: "Bearer eyJraWQiOi…" },
});
const organization = { "X-Organization-Id": "9c1e3b5d-7f9a-4c1e-8b5d-7f9a3f9a7c1e" };
const chatbotId = "0b3f5a3e-8a52-4c55-9d3e-2f0c7b1f6a10";
const toolId = "5d7f9a3f-9a7c-4e5b-9d4f-6a8c0e1b3d5f";
const entryId = "7a9c1e3b-5d7f-4a3f-9a7c-1e5b2d4f6a8c";
const userId = "1e8c2130-784a-4b76-a567-5c7ad0348dec";
const organizationId = "71469b21-4fd2-4f6e-988b-76fa07f3facb";
const endpointId = "3e5b7d9f-8e2c-4a6f-9b1d-3e5f7a9c2e4b";
const deliveryId = "018f5a3e-8a52-7c55-9d3e-2f0c7b1f6a10";

/** The methods a path of the document really has (openapi-typescript marks the others `never`). */
type Operations<Path> = {
  [Method in keyof Path as Path[Method] extends { responses: unknown }
    ? Method
    : never]: () => Promise<unknown>;
};

/** One call per operation; a path or method missing here is a compile error. */
export const everyOperation: { [Path in keyof paths]: Operations<paths[Path]> } = {
  "/api/conversation": {
    post: async () => {
      const { data } = await api.POST("/api/conversation", {
        params: { header: { "Idempotency-Key": "start-0001" } },
        body: {
          chatbot_id: "0b3f5a3e-8a52-4c55-9d3e-2f0c7b1f6a10",
          user_name: "Ann",
          user_email: null,
        },
      });
      return data?.conversation_id satisfies string | undefined;
    },
  },
  "/api/message": {
    post: async () => {
      const { data, error } = await api.POST("/api/message", {
        params: { header: { "Idempotency-Key": "msg-0001" } },
        body: {
          conversation_id: conversationId,
          message: "Where is my order?",
          attachments: [
            { type: "image", url: "https://example.com/parcel.jpg" },
            { type: "image", data: "iVBORw0KGgo=", media_type: "image/png" },
          ],
        },
      });
      return data?.messages[0]?.content ?? error?.detail;
    },
  },
  "/api/message/stream": {
    post: async () => {
      // Served at the stream base URL (the StreamUrl output); the body is the events, read as a stream.
      const { response, error } = await api.POST("/api/message/stream", {
        baseUrl: "https://a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6.lambda-url.eu-west-1.on.aws",
        params: { header: { "Idempotency-Key": "msg-0002" } },
        body: { conversation_id: conversationId, message: "Where is my order?" },
        parseAs: "stream",
      });
      return (response.body satisfies ReadableStream<Uint8Array> | null) ?? error?.detail;
    },
  },

  "/api/conversation/{conversation_id}": {
    get: async () =>
      (
        await api.GET("/api/conversation/{conversation_id}", {
          params: { path: { conversation_id: conversationId } },
        })
      ).data?.status,
  },
  "/api/conversations": {
    get: async () =>
      (await api.GET("/api/conversations", { params: { query: { status: "handoff", limit: 10 } } })).data
        ?.conversations[0]?.message_count,
  },
  "/api/conversation/{conversation_id}/handoff": {
    post: async () =>
      (
        await api.POST("/api/conversation/{conversation_id}/handoff", {
          params: { path: { conversation_id: conversationId } },
          body: { reason: "asked for a person" },
        })
      ).data?.status,
  },
  "/api/message/{message_id}/feedback": {
    post: async () =>
      (
        await api.POST("/api/message/{message_id}/feedback", {
          params: { path: { message_id: "2b4d6f8a-1c3e-4a5b-8d7f-9e1a2b3c4d5e" } },
          body: { rating: "down", comment: "Not my order" },
        })
      ).data?.given_at,
  },
  "/api/conversation/{conversation_id}/rating": {
    post: async () =>
      (
        await api.POST("/api/conversation/{conversation_id}/rating", {
          params: { path: { conversation_id: conversationId } },
          body: { score: 4 },
        })
      ).data?.rated_at,
  },
  "/api/conversation/{conversation_id}/close": {
    post: async () =>
      (
        await api.POST("/api/conversation/{conversation_id}/close", {
          params: { path: { conversation_id: conversationId } },
        })
      ).data?.status,
  },
  "/api/conversation/{conversation_id}/messages": {
    get: async () => {
      const first = await api.GET("/api/conversation/{conversation_id}/messages", {
        params: { path: { conversation_id: conversationId }, query: { limit: 20 } },
      });
      const cursor = first.data?.next_cursor ?? undefined;
      await api.GET("/api/conversation/{conversation_id}/messages", {
        params: {
          path: { conversation_id: conversationId },
          // @ts-expect-error `limit` is an integer: a string is refused (the server parses it as one).
          query: { limit: "20", cursor },
        },
      });
      return first.data?.has_more satisfies boolean | undefined;
    },
  },
  "/api/me": {
    get: async () => {
      const { data } = await api.GET("/api/me");
      return data?.rate_limit.limit satisfies number | undefined;
    },
  },
  "/api/widget/session": {
    post: async () => {
      // The website widget's call, from a visitor's browser: no API key.
      const widget = createClient<paths>({ baseUrl: "https://console.example.com" });
      const { data, error } = await widget.POST("/api/widget/session", {
        body: { chatbot_id: chatbotId, visitor: "cvs_example", identity: null },
      });
      return data?.widget.welcome_message ?? data?.conversation_id ?? error?.detail;
    },
  },
  "/ping": {
    get: async () => (await api.GET("/ping")).data?.message satisfies "pong" | undefined,
  },
  "/openapi.json": {
    get: async () => (await api.GET("/openapi.json")).data,
  },
  "/manage/me": {
    get: async () => {
      const { data, error } = await consoleApi.GET("/manage/me");
      return data?.memberships[0]?.organization_id ?? error?.error.code;
    },
  },
  "/manage/organization": {
    get: async () =>
      (await consoleApi.GET("/manage/organization", { params: { header: organization } })).data?.rate_limit,
    patch: async () =>
      (
        await consoleApi.PATCH("/manage/organization", {
          params: { header: organization },
          body: { name: "Acme" },
        })
      ).data?.name,
  },
  "/manage/organizations": {
    get: async () => {
      const first = await consoleApi.GET("/manage/organizations", { params: { query: { limit: 50 } } });
      const cursor = first.data?.next_cursor ?? undefined;
      await consoleApi.GET("/manage/organizations", {
        // @ts-expect-error `limit` is an integer: a string is refused (the server parses it as one).
        params: { query: { limit: "50", cursor } },
      });
      return first.data?.has_more satisfies boolean | undefined;
    },
    post: async () => {
      const { data } = await consoleApi.POST("/manage/organizations", {
        body: {
          name: "New Shop",
          rate_limit: 300,
          subscription: "active",
          admin_email: "owner@new-shop.example",
        },
      });
      return data?.invitation;
    },
  },
  "/manage/organizations/{organization_id}": {
    get: async () =>
      (
        await consoleApi.GET("/manage/organizations/{organization_id}", {
          params: { path: { organization_id: organizationId } },
        })
      ).data?.subscription,
    patch: async () =>
      (
        await consoleApi.PATCH("/manage/organizations/{organization_id}", {
          params: { path: { organization_id: organizationId } },
          body: { subscription: "inactive", rate_limit: 50 },
        })
      ).data?.subscription,
  },
  "/manage/members": {
    get: async () =>
      (await consoleApi.GET("/manage/members", { params: { header: organization } })).data?.members[0]?.role,
    post: async () =>
      (
        await consoleApi.POST("/manage/members", {
          params: { header: organization },
          body: { email: "colleague@example.com", role: "viewer", display_name: "Colleague" },
        })
      ).data?.invitation,
  },
  "/manage/members/{user_id}": {
    patch: async () =>
      (
        await consoleApi.PATCH("/manage/members/{user_id}", {
          params: { header: organization, path: { user_id: userId } },
          body: { role: "admin" },
        })
      ).data?.role,
    delete: async () =>
      (
        await consoleApi.DELETE("/manage/members/{user_id}", {
          params: { header: organization, path: { user_id: userId } },
        })
      ).response.status,
  },
  "/manage/api-keys": {
    get: async () =>
      (
        await consoleApi.GET("/manage/api-keys", {
          params: { header: organization, query: { include_revoked: true } },
        })
      ).data?.api_keys[0]?.last_used_at,
    post: async () => {
      const { data } = await consoleApi.POST("/manage/api-keys", {
        params: { header: organization },
        body: { name: "website", scope: "manage" },
      });
      return data?.key satisfies string | undefined;
    },
  },
  "/manage/api-keys/{key_id}": {
    delete: async () =>
      (
        await consoleApi.DELETE("/manage/api-keys/{key_id}", {
          params: { header: organization, path: { key_id: "key_pyDE9qJj6gIYrYQ2" } },
        })
      ).response.status,
  },
  "/manage/chatbots": {
    get: async () =>
      (await consoleApi.GET("/manage/chatbots", { params: { header: organization } })).data?.chatbots.length,
    post: async () =>
      (
        await consoleApi.POST("/manage/chatbots", {
          params: { header: organization },
          body: {
            name: "Support",
            engine: { kind: "bedrock", model_id: "eu.anthropic.claude-3-7-sonnet-20250219-v1:0" },
          },
        })
      ).data?.chatbot_id,
  },
  "/manage/chatbots/{chatbot_id}": {
    get: async () =>
      (
        await consoleApi.GET("/manage/chatbots/{chatbot_id}", {
          params: { header: organization, path: { chatbot_id: chatbotId } },
        })
      ).data?.engine.kind,
    patch: async () =>
      (
        await consoleApi.PATCH("/manage/chatbots/{chatbot_id}", {
          params: { header: organization, path: { chatbot_id: chatbotId } },
          body: { temperature: 0.5, fallback_reply: "Please try again later." },
        })
      ).data?.temperature,
    delete: async () =>
      (
        await consoleApi.DELETE("/manage/chatbots/{chatbot_id}", {
          params: { header: organization, path: { chatbot_id: chatbotId } },
        })
      ).response.status,
  },
  "/manage/chatbots/{chatbot_id}/engine/test": {
    post: async () => {
      const { data } = await consoleApi.POST("/manage/chatbots/{chatbot_id}/engine/test", {
        params: { header: organization, path: { chatbot_id: chatbotId } },
        body: {
          engine: {
            kind: "openai",
            base_url: "https://api.openai.com/v1",
            model: "gpt-4o-mini",
            api_key: "sk-…",
          },
        },
      });
      return data?.ok ? data.reply : data?.error?.code;
    },
  },
  "/manage/engine-options": {
    get: async () =>
      (await consoleApi.GET("/manage/engine-options", { params: { header: organization } })).data
        ?.bedrock_models[0]?.model_id,
  },
  "/manage/chatbots/{chatbot_id}/knowledge": {
    get: async () =>
      (
        await consoleApi.GET("/manage/chatbots/{chatbot_id}/knowledge", {
          params: { header: organization, path: { chatbot_id: chatbotId } },
        })
      ).data?.entries.length,
    post: async () =>
      (
        await consoleApi.POST("/manage/chatbots/{chatbot_id}/knowledge", {
          params: { header: organization, path: { chatbot_id: chatbotId } },
          body: { kind: "qa", question: "Do you ship abroad?", answer: "Within the EU." },
        })
      ).data?.entry_id,
  },
  "/manage/chatbots/{chatbot_id}/knowledge/search": {
    post: async () =>
      (
        await consoleApi.POST("/manage/chatbots/{chatbot_id}/knowledge/search", {
          params: { header: organization, path: { chatbot_id: chatbotId } },
          body: { query: "Do you ship abroad?", limit: 5 },
        })
      ).data?.results[0]?.score,
  },
  "/manage/chatbots/{chatbot_id}/knowledge-gaps": {
    get: async () =>
      (
        await consoleApi.GET("/manage/chatbots/{chatbot_id}/knowledge-gaps", {
          params: {
            header: organization,
            path: { chatbot_id: chatbotId },
            query: { from: "2026-11-01", to: "2026-11-27" },
          },
        })
      ).data?.gaps[0]?.count,
  },
  "/manage/chatbots/{chatbot_id}/knowledge/{entry_id}": {
    patch: async () =>
      (
        await consoleApi.PATCH("/manage/chatbots/{chatbot_id}/knowledge/{entry_id}", {
          params: { header: organization, path: { chatbot_id: chatbotId, entry_id: entryId } },
          body: { kind: "snippet", title: "Hours", text: "Weekdays 9–17." },
        })
      ).data?.text,
    delete: async () =>
      (
        await consoleApi.DELETE("/manage/chatbots/{chatbot_id}/knowledge/{entry_id}", {
          params: { header: organization, path: { chatbot_id: chatbotId, entry_id: entryId } },
        })
      ).response.status,
  },
  "/manage/tool-templates": {
    get: async () =>
      (await consoleApi.GET("/manage/tool-templates", { params: { header: organization } })).data
        ?.templates[0]?.credentials,
  },
  "/manage/chatbots/{chatbot_id}/tools": {
    get: async () =>
      (
        await consoleApi.GET("/manage/chatbots/{chatbot_id}/tools", {
          params: { header: organization, path: { chatbot_id: chatbotId } },
        })
      ).data?.tools[0]?.credentials,
    post: async () =>
      (
        await consoleApi.POST("/manage/chatbots/{chatbot_id}/tools", {
          params: { header: organization, path: { chatbot_id: chatbotId } },
          body: {
            kind: "woocommerce",
            config: { shopUrl: "https://shop.example" },
            credentials: { consumerKey: "ck_…", consumerSecret: "cs_…" },
          },
        })
      ).data?.tool_id,
  },
  "/manage/chatbots/{chatbot_id}/tools/{tool_id}": {
    get: async () =>
      (
        await consoleApi.GET("/manage/chatbots/{chatbot_id}/tools/{tool_id}", {
          params: { header: organization, path: { chatbot_id: chatbotId, tool_id: toolId } },
        })
      ).data?.variables,
    patch: async () =>
      (
        await consoleApi.PATCH("/manage/chatbots/{chatbot_id}/tools/{tool_id}", {
          params: { header: organization, path: { chatbot_id: chatbotId, tool_id: toolId } },
          body: { requests_per_minute: 30 },
        })
      ).data?.requests_per_minute,
    delete: async () =>
      (
        await consoleApi.DELETE("/manage/chatbots/{chatbot_id}/tools/{tool_id}", {
          params: { header: organization, path: { chatbot_id: chatbotId, tool_id: toolId } },
        })
      ).response.status,
  },
  "/manage/chatbots/{chatbot_id}/tools/{tool_id}/test": {
    post: async () =>
      (
        await consoleApi.POST("/manage/chatbots/{chatbot_id}/tools/{tool_id}/test", {
          params: { header: organization, path: { chatbot_id: chatbotId, tool_id: toolId } },
          body: { values: { order_number: "1001", email: "jan.jansen@example.nl" } },
        })
      ).data?.requests[0]?.url,
  },
  "/manage/chatbots/{chatbot_id}/widget": {
    get: async () =>
      (
        await consoleApi.GET("/manage/chatbots/{chatbot_id}/widget", {
          params: { header: organization, path: { chatbot_id: chatbotId } },
        })
      ).data?.appearance.starter_questions,
    put: async () =>
      (
        await consoleApi.PUT("/manage/chatbots/{chatbot_id}/widget", {
          params: { header: organization, path: { chatbot_id: chatbotId } },
          body: {
            enabled: true,
            allowed_origins: ["https://shop.example", "https://*.shop.example"],
            appearance: { color: "#0a7b34", position: "left" },
            daily_message_budget: 500,
          },
        })
      ).data?.identity_secret_created_at,
  },
  "/manage/chatbots/{chatbot_id}/widget/identity-secret": {
    post: async () =>
      (
        await consoleApi.POST("/manage/chatbots/{chatbot_id}/widget/identity-secret", {
          params: { header: organization, path: { chatbot_id: chatbotId } },
        })
      ).data?.identity_secret,
  },
  "/manage/conversations": {
    get: async () => {
      const { data } = await consoleApi.GET("/manage/conversations", {
        params: {
          header: organization,
          query: { chatbot_id: chatbotId, status: "open", from: "2026-11-01", limit: 20 },
        },
      });
      return data?.next_cursor;
    },
  },
  "/manage/conversations/{conversation_id}": {
    get: async () =>
      (
        await consoleApi.GET("/manage/conversations/{conversation_id}", {
          params: { header: organization, path: { conversation_id: conversationId }, query: { limit: 50 } },
        })
      ).data?.messages[0]?.content,
  },
  "/manage/conversations/{conversation_id}/close": {
    post: async () =>
      (
        await consoleApi.POST("/manage/conversations/{conversation_id}/close", {
          params: { header: organization, path: { conversation_id: conversationId } },
        })
      ).data?.status,
  },
  "/manage/conversations/{conversation_id}/take-over": {
    post: async () =>
      (
        await consoleApi.POST("/manage/conversations/{conversation_id}/take-over", {
          params: { header: organization, path: { conversation_id: conversationId } },
        })
      ).data?.status,
  },
  "/manage/conversations/{conversation_id}/hand-back": {
    post: async () =>
      (
        await consoleApi.POST("/manage/conversations/{conversation_id}/hand-back", {
          params: { header: organization, path: { conversation_id: conversationId } },
        })
      ).data?.status,
  },
  "/manage/conversations/{conversation_id}/reply": {
    post: async () =>
      (
        await consoleApi.POST("/manage/conversations/{conversation_id}/reply", {
          params: { header: organization, path: { conversation_id: conversationId } },
          body: { message: "A person here." },
        })
      ).data?.message.agent_name,
  },
  "/manage/contacts": {
    get: async () =>
      (
        await consoleApi.GET("/manage/contacts", {
          params: { header: organization, query: { query: "ann", limit: 20 } },
        })
      ).data?.contacts[0]?.user_email,
  },
  "/manage/contacts/{contact_id}": {
    get: async () =>
      (
        await consoleApi.GET("/manage/contacts/{contact_id}", {
          params: { header: organization, path: { contact_id: "6f2c1d3e-0000-4000-8000-000000000001" } },
        })
      ).data?.conversations[0]?.visitor_message_count,
  },
  "/manage/usage": {
    get: async () =>
      (
        await consoleApi.GET("/manage/usage", {
          params: { header: organization, query: { from: "2026-09-01" } },
        })
      ).data?.totals.lookups.found,
  },
  "/manage/analytics": {
    get: async () =>
      (
        await consoleApi.GET("/manage/analytics", {
          params: { header: organization, query: { from: "2026-09-01", chatbot_id: chatbotId } },
        })
      ).data?.series[0]?.handoff_reasons.tool_failed,
  },
  "/manage/webhook-endpoints": {
    get: async () =>
      (await consoleApi.GET("/manage/webhook-endpoints", { params: { header: organization } })).data
        ?.webhook_endpoints[0]?.disabled_reason,
    post: async () => {
      const { data } = await consoleApi.POST("/manage/webhook-endpoints", {
        params: { header: organization },
        body: {
          url: "https://hooks.example.com/chatbot",
          events: ["message.created", "conversation.closed"],
        },
      });
      return data?.secret satisfies string | undefined;
    },
  },
  "/manage/webhook-endpoints/{endpoint_id}": {
    get: async () =>
      (
        await consoleApi.GET("/manage/webhook-endpoints/{endpoint_id}", {
          params: { header: organization, path: { endpoint_id: endpointId } },
        })
      ).data?.enabled,
    patch: async () =>
      (
        await consoleApi.PATCH("/manage/webhook-endpoints/{endpoint_id}", {
          params: { header: organization, path: { endpoint_id: endpointId } },
          body: { enabled: true },
        })
      ).data?.failing_since,
    delete: async () =>
      (
        await consoleApi.DELETE("/manage/webhook-endpoints/{endpoint_id}", {
          params: { header: organization, path: { endpoint_id: endpointId } },
        })
      ).response.status,
  },
  "/manage/webhook-endpoints/{endpoint_id}/rotate-secret": {
    post: async () =>
      (
        await consoleApi.POST("/manage/webhook-endpoints/{endpoint_id}/rotate-secret", {
          params: { header: organization, path: { endpoint_id: endpointId } },
        })
      ).data?.previous_secret_expires_at,
  },
  "/manage/webhook-endpoints/{endpoint_id}/deliveries": {
    get: async () =>
      (
        await consoleApi.GET("/manage/webhook-endpoints/{endpoint_id}/deliveries", {
          params: { header: organization, path: { endpoint_id: endpointId }, query: { limit: 20 } },
        })
      ).data?.deliveries[0]?.attempts[0]?.status,
  },
  "/manage/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/redeliver": {
    post: async () =>
      (
        await consoleApi.POST("/manage/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/redeliver", {
          params: { header: organization, path: { endpoint_id: endpointId, delivery_id: deliveryId } },
        })
      ).data?.state,
  },
};
