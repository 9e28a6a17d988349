/**
 * A client of the published API, written the way an integrator writes one: types generated from
 * docs/openapi.json by openapi-typescript (`npm run openapi:client`) and calls made with openapi-fetch.
 * It is only type-checked (`npm run openapi:check`, part of `npm test`), never run: it fails to compile
 * when the document types a parameter or field differently from what the server accepts, or when an
 * operation of the document has no call here.
 */
import createClient from "openapi-fetch";
import type { paths } from "./generated/api.ts";

const api = createClient<paths>({
  baseUrl: "https://api-v1.example.com",
  headers: { Authorization: "Bearer cbk_example" },
});

const conversationId = "4e182a9a-4425-4144-a4ba-d6998cd1143f";

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
  "/ping": {
    get: async () => (await api.GET("/ping")).data?.message satisfies "pong" | undefined,
  },
  "/openapi.json": {
    get: async () => (await api.GET("/openapi.json")).data,
  },
};
