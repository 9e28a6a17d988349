/**
 * The local runtime's model stand-in: a server speaking Amazon Bedrock Runtime's wire protocol
 * (cleartext HTTP/2, as the SDK's default handler speaks it), so the functions' real Bedrock client
 * runs against it exactly as deployed (`AWS_ENDPOINT_URL_BEDROCK_RUNTIME`):
 *
 * - `POST /model/{id}/invoke`: embeddings in Titan Text Embeddings V2's format, by the local concept
 *   model (test/fakes/concept-embedding.ts: WordNet senses, not a neural model; say so wherever its
 *   figures are shown);
 * - `POST /model/{id}/converse` and `/converse-stream`: a deterministic "model" that answers from
 *   the passages in its system prompt (the first one's text, or that it does not know when there are
 *   none), so a Bedrock chatbot shows grounded, cited answers on this machine. It is no language
 *   model: it reads nothing but the passages block its prompt carries.
 *
 * Started by `npm start` unless AWS_ENDPOINT_URL_BEDROCK_RUNTIME already names another (the test
 * suite's scriptable fake).
 */
import {
  createServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
} from "node:http2";
import type { AddressInfo } from "node:net";
import { conceptEmbedding } from "#test/fakes/concept-embedding";
import { titanEmbeddingAnswer } from "#test/fakes/embedding-answers";
import { send } from "#test/fakes/scripted-http";
import { type StreamStep, tokens } from "#test/fakes/stream-steps";

export interface RunningModelStandIn {
  endpoint: string;
  close(): Promise<void>;
}

const DONT_KNOW =
  "I'm sorry, I don't know that: it is not in the information I have. Would you like me to put you in touch with a person?";

/** What the stand-in answers to a Converse request: the first passage of its system prompt, or that it does not know. */
export function standInAnswer(body: unknown): string {
  const system = ((body as { system?: { text?: string }[] } | undefined)?.system ?? [])
    .map((block) => block.text ?? "")
    .join("\n");
  const passages = system.split("Passages:\n\n")[1];
  if (!passages) return DONT_KNOW;
  const first = passages.split(/\n\n\[\d+\] /)[0] ?? "";
  const text = first.split("\n").slice(1).join("\n").trim();
  return text || DONT_KNOW;
}

function converseBody(text: string): unknown {
  return {
    output: { message: { role: "assistant", content: [{ text }] } },
    stopReason: "end_turn",
    usage: {
      inputTokens: 100,
      outputTokens: Math.ceil(text.length / 4),
      totalTokens: 100 + Math.ceil(text.length / 4),
    },
    metrics: { latencyMs: 5 },
  };
}

function converseStreamSteps(text: string): StreamStep[] {
  const steps: StreamStep[] = [{ event: "messageStart", payload: { role: "assistant" } }];
  for (const token of tokens(text)) {
    steps.push(
      { pause: 15 },
      { event: "contentBlockDelta", payload: { contentBlockIndex: 0, delta: { text: token } } },
    );
  }
  steps.push(
    { event: "contentBlockStop", payload: { contentBlockIndex: 0 } },
    { event: "messageStop", payload: { stopReason: "end_turn" } },
    {
      event: "metadata",
      payload: { usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 }, metrics: { latencyMs: 5 } },
    },
  );
  return steps;
}

export async function startModelStandIn(
  options: { port?: number; host?: string } = {},
): Promise<RunningModelStandIn> {
  const sessions = new Set<Http2Session>();
  const server = createServer((req: Http2ServerRequest, res: Http2ServerResponse) => {
    // WordNet is read once, now, rather than inside the first request (about a second on a busy machine).
    conceptEmbedding("warm up", 8);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = (req.url ?? "").split("?")[0] ?? "";
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "null");
      } catch {
        body = undefined;
      }
      if (req.method === "POST" && /^\/model\/[^/]+\/invoke$/.test(path))
        return send(res, titanEmbeddingAnswer(body));
      if (req.method === "POST" && /^\/model\/[^/]+\/converse$/.test(path))
        return send(res, { body: converseBody(standInAnswer(body)) });
      if (req.method === "POST" && /^\/model\/[^/]+\/converse-stream$/.test(path))
        return send(res, {
          headers: { "content-type": "application/vnd.amazon.eventstream" },
          stream: converseStreamSteps(standInAnswer(body)),
        });
      send(res, {
        status: 404,
        headers: { "x-amzn-errortype": "UnknownOperationException" },
        body: { message: "Unknown operation" },
      });
    });
  }).on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve),
  );
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
