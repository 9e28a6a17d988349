/**
 * A Bedrock Converse fake for integration tests, where the runtime under test (another process)
 * calls it and test files running in parallel each script their own responses. Each test uses its
 * own model id; responses are queued and requests recorded per model id. Converse and
 * ConverseStream (an AWS event stream, test/fakes/stream-steps.ts) are served over cleartext HTTP/2
 * (what the SDK speaks); the control API over HTTP/1.1 on a second port:
 *   POST /script   {"modelId", "responses": ScriptedResponse[]}   queue responses
 *   GET  /requests?modelId=…                                       what the SDK sent
 *   POST /release  {"modelId"}                                     let a stream waiting at `hold` go on
 *   GET  /embedding-calls                                          InvokeModel calls so far
 * InvokeModel (`/model/{id}/invoke`) answers embedding requests with the local concept model
 * (test/fakes/embedding-answers.ts), unscripted: every chatbot's retrieval reaches it.
 */
import { createServer as createHttp1Server } from "node:http";
import { createServer as createHttp2Server, type Http2Session } from "node:http2";
import type { AddressInfo } from "node:net";
import { awsError } from "#test/fakes/bedrock-server";
import { conceptEmbedding } from "#test/fakes/concept-embedding";
import { titanEmbeddingAnswer } from "#test/fakes/embedding-answers";
import { type ScriptedResponse, send } from "#test/fakes/scripted-http";
import { releaseGate } from "#test/fakes/stream-steps";

export interface KeyedBedrock {
  /** Converse endpoint (h2c), for AWS_ENDPOINT_URL_BEDROCK_RUNTIME. */
  url: string;
  /** Control API (HTTP/1.1). */
  controlUrl: string;
  close(): Promise<void>;
}

export async function startKeyedBedrock(): Promise<KeyedBedrock> {
  // WordNet is read once, now, rather than inside the first request (about a second on a busy machine).
  conceptEmbedding("warm up", 8);
  const queues = new Map<string, ScriptedResponse[]>();
  const requests = new Map<string, unknown[]>();
  const sessions = new Set<Http2Session>();
  const gates = new Map<string, ReturnType<typeof releaseGate>>();
  let embeddingCalls = 0;
  const gateOf = (modelId: string) => {
    const gate = gates.get(modelId) ?? releaseGate();
    gates.set(modelId, gate);
    return gate;
  };

  const converse = createHttp2Server((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = (req.url ?? "").split("?")[0] ?? "";
      // InvokeModel of an embedding model: the local concept model answers, unscripted.
      const invoke = /^\/model\/([^/]+)\/invoke$/.exec(path);
      if (invoke) {
        embeddingCalls++;
        const body = Buffer.concat(chunks).toString("utf8");
        send(res, titanEmbeddingAnswer(parseJson(body)));
        return;
      }
      const match = /^\/model\/([^/]+)\/converse(?:-stream)?$/.exec(path);
      const modelId = match?.[1] ? decodeURIComponent(match[1]) : undefined;
      const reply =
        modelId === undefined
          ? awsError(404, "UnknownOperationException", "Unknown operation")
          : (queues.get(modelId)?.shift() ??
            awsError(400, "ValidationException", `No scripted reply for ${modelId}`));
      if (modelId !== undefined) {
        const body = Buffer.concat(chunks).toString("utf8");
        requests.set(modelId, [...(requests.get(modelId) ?? []), JSON.parse(body || "null")]);
      }
      send(res, reply, modelId === undefined ? undefined : gateOf(modelId).released);
    });
  }).on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });

  const control = createHttp1Server((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://control");
      res.setHeader("content-type", "application/json");
      if (req.method === "POST" && url.pathname === "/script") {
        const { modelId, responses } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          modelId: string;
          responses: ScriptedResponse[];
        };
        queues.set(modelId, [...(queues.get(modelId) ?? []), ...responses]);
        res.end("{}");
        return;
      }
      if (req.method === "POST" && url.pathname === "/release") {
        const { modelId } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { modelId: string };
        gateOf(modelId).release();
        res.end("{}");
        return;
      }
      if (req.method === "GET" && url.pathname === "/embedding-calls") {
        res.end(JSON.stringify({ calls: embeddingCalls }));
        return;
      }
      if (req.method === "GET" && url.pathname === "/requests") {
        res.end(JSON.stringify(requests.get(url.searchParams.get("modelId") ?? "") ?? []));
        return;
      }
      res.statusCode = 404;
      res.end("{}");
    });
  });

  await new Promise<void>((resolve) => converse.listen(0, "127.0.0.1", resolve));
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(converse.address() as AddressInfo).port}`,
    controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
    close: async () => {
      for (const session of sessions) session.destroy();
      control.closeAllConnections();
      await Promise.all([
        new Promise<void>((resolve) => converse.close(() => resolve())),
        new Promise<void>((resolve) => control.close(() => resolve())),
      ]);
    },
  };
}

/** Test-side client of the control API. */
export const bedrockControl = (controlUrl: string) => ({
  async script(modelId: string, ...responses: ScriptedResponse[]): Promise<void> {
    await fetch(`${controlUrl}/script`, { method: "POST", body: JSON.stringify({ modelId, responses }) });
  },
  /** Lets the model's stream waiting at a `hold` step go on. */
  async release(modelId: string): Promise<void> {
    await fetch(`${controlUrl}/release`, { method: "POST", body: JSON.stringify({ modelId }) });
  },
  async embeddingCalls(): Promise<number> {
    return ((await (await fetch(`${controlUrl}/embedding-calls`)).json()) as { calls: number }).calls;
  },
  async requests(modelId: string): Promise<unknown[]> {
    return (await (
      await fetch(`${controlUrl}/requests?modelId=${encodeURIComponent(modelId)}`)
    ).json()) as unknown[];
  },
});

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
