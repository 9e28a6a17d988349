/**
 * The embedding clients against local servers speaking the real wire protocols: Bedrock's
 * InvokeModel through the AWS SDK (Titan Text Embeddings V2's body), and OpenAI's `/v1/embeddings`.
 * Then the retriever: an index kept per knowledge version, and lexical retrieval when embedding fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBedrockClient } from "#functions/agent/bedrock-engine";
import {
  createOpenAiEmbedder,
  createTitanEmbedder,
  type Embedder,
  EmbeddingError,
  similarityBars,
  TITAN_V2,
} from "#functions/knowledge/embeddings";
import { createRetriever, type LoadedKnowledge } from "#functions/knowledge/retriever";
import { BlockedAddressError } from "#functions/net/outbound-address";
import { createOutboundClient } from "#functions/net/outbound-http";
import { awsError, type FakeBedrock, startFakeBedrock } from "#test/fakes/bedrock-server";
import { conceptEmbedding } from "#test/fakes/concept-embedding";
import { conceptBars, shopPassages } from "#test/fakes/knowledge-fixture";
import { type FakeOpenAi, openAiError, sendReaching, startFakeOpenAi } from "#test/fakes/openai-server";

let bedrock: FakeBedrock;
let failing: FakeBedrock;
let openAi: FakeOpenAi;
beforeAll(async () => {
  [bedrock, failing, openAi] = await Promise.all([
    startFakeBedrock(),
    startFakeBedrock({ scriptedInvoke: true }),
    startFakeOpenAi(),
  ]);
});
afterAll(async () => {
  await Promise.all([bedrock.close(), failing.close(), openAi.close()]);
});

const clientOf = (server: FakeBedrock) =>
  createBedrockClient({
    region: "us-east-1",
    endpoint: server.url,
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  });

describe("Titan Text Embeddings V2 through InvokeModel", () => {
  it("sends Titan's body to /model/{id}/invoke and reads the vector", async () => {
    const embedder = createTitanEmbedder({ client: clientOf(bedrock) });
    const before = bedrock.requests.length;

    const [vector] = await embedder.embed(["Can I return my order?"]);

    const request = bedrock.requests[before];
    expect(request?.path).toBe(`/model/${encodeURIComponent(TITAN_V2)}/invoke`);
    expect(request?.body).toEqual({
      inputText: "Can I return my order?",
      dimensions: 256,
      normalize: true,
      embeddingTypes: ["float"],
    });
    expect(request?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
    expect(vector).toHaveLength(256);
    expect(Array.from(vector ?? [])).toEqual(
      conceptEmbedding("Can I return my order?", 256).map((value) => Math.fround(value)),
    );
  });

  it("embeds many texts, one call each, in order", async () => {
    const embedder = createTitanEmbedder({ client: clientOf(bedrock) });
    const texts = Array.from({ length: 12 }, (_, i) => `question number ${i}`);
    const vectors = await embedder.embed(texts);
    expect(vectors.map((vector) => Array.from(vector))).toEqual(
      texts.map((text) => conceptEmbedding(text, 256).map((value) => Math.fround(value))),
    );
  });

  it("fails with the service's error (the retriever then searches lexically)", async () => {
    failing.enqueue(awsError(429, "ThrottlingException", "Too many requests"));
    const embedder = createTitanEmbedder({ client: clientOf(failing) });
    await expect(embedder.embed(["hello"])).rejects.toMatchObject({ name: "ThrottlingException" });
  });
});

describe("OpenAI-compatible /v1/embeddings", () => {
  it("sends the texts in one request, with dimensions for text-embedding-3 models", async () => {
    const embedder = createOpenAiEmbedder({
      baseUrl: `${openAi.url}/v1`,
      apiKey: "sk-test",
      model: "text-embedding-3-small",
      dimensions: 256,
      send: sendReaching(openAi),
    });
    const before = openAi.requests.length;

    const vectors = await embedder.embed(["first", "second"]);

    const request = openAi.requests[before];
    expect(request?.path).toBe("/v1/embeddings");
    expect(request?.headers.authorization).toBe("Bearer sk-test");
    expect(request?.body).toEqual({
      model: "text-embedding-3-small",
      input: ["first", "second"],
      encoding_format: "float",
      dimensions: 256,
    });
    expect(vectors).toHaveLength(2);
    expect(embedder.dimensions).toBe(256);
  });

  it("sends no Authorization to a server without keys, and no dimensions to other models", async () => {
    const embedder = createOpenAiEmbedder({
      baseUrl: `${openAi.url}/v1`,
      apiKey: "",
      model: "nomic-embed-text",
      send: sendReaching(openAi),
    });
    const before = openAi.requests.length;
    await embedder.embed(["hello"]);
    expect(openAi.requests[before]?.headers.authorization).toBeUndefined();
    expect(openAi.requests[before]?.body).not.toHaveProperty("dimensions");
  });

  it("refuses an answer that holds no vectors", async () => {
    const send = sendReaching(openAi);
    const embedder = createOpenAiEmbedder({ baseUrl: `${openAi.url}/v1`, apiKey: "", model: "m", send });
    await expect(embedder.embed([])).resolves.toEqual([]);
    const broken = createOpenAiEmbedder({ baseUrl: `${openAi.url}/nowhere`, apiKey: "", model: "m", send });
    await expect(broken.embed(["x"])).rejects.toBeInstanceOf(EmbeddingError);
    expect(openAiError).toBeDefined();
  });

  it("goes through the address guard: a server on a non-public address is never connected to", async () => {
    const embedder = createOpenAiEmbedder({
      baseUrl: `${openAi.url}/v1`,
      apiKey: "sk-test",
      model: "text-embedding-3-small",
      send: createOutboundClient(),
    });
    const before = openAi.requests.length;
    await expect(embedder.embed(["hello"])).rejects.toBeInstanceOf(BlockedAddressError);
    expect(openAi.requests.length).toBe(before);
  });
});

describe("similarity bars", () => {
  it("takes configured bars, else the model's own", () => {
    expect(similarityBars(TITAN_V2)).toEqual({ confident: 0.55, relevant: 0.35 });
    expect(similarityBars(TITAN_V2, "0.45,0.25")).toEqual({ confident: 0.45, relevant: 0.25 });
    expect(similarityBars(TITAN_V2, "nonsense")).toEqual({ confident: 0.55, relevant: 0.35 });
  });
});

describe("the retriever", () => {
  const loaded = (version: number): LoadedKnowledge => ({ version, passages: [...shopPassages] });

  it("loads a version's passages once per instance, again when the version moves", async () => {
    const loads: number[] = [];
    const retriever = createRetriever(async (_org, _bot, version) => {
      loads.push(version);
      return loaded(version);
    });
    const embedder = createTitanEmbedder({ client: clientOf(bedrock), bars: conceptBars });
    const ask = (version: number, question: string) =>
      retriever.retrieve({ organizationId: "o", chatbotId: "b", version, question, embedder });

    const first = await ask(1, "opening hours");
    const second = await ask(1, "can I pay with paypal");
    const third = await ask(2, "opening hours");

    expect(loads).toEqual([1, 2]);
    expect(first.passages[0]?.passage.passageId).toBe("kb-hours");
    expect(first.semantic).toBe(true);
    expect(second.timings.loadMs).toBe(0);
    expect(third.passages[0]?.passage.passageId).toBe("kb-hours");
    expect(retriever.has("o", "b", 2)).toBe(true);
    expect(retriever.has("o", "b", 1)).toBe(false);
  });

  it("searches lexically when the question cannot be embedded", async () => {
    const broken: Embedder = {
      model: "m",
      dimensions: 3,
      bars: conceptBars,
      embed: async () => {
        throw new EmbeddingError("down");
      },
    };
    const retriever = createRetriever(async (_org, _bot, version) => loaded(version));
    const result = await retriever.retrieve({
      organizationId: "o",
      chatbotId: "b",
      version: 1,
      question: "how much does shipping cost",
      embedder: broken,
    });
    expect(result.semantic).toBe(false);
    expect(result.passages[0]?.passage.passageId).toBe("kb-shipping-cost");
    expect(result.confident).toBe(true);
  });

  it("reads nothing for a chatbot without knowledge", async () => {
    let loads = 0;
    const retriever = createRetriever(async (_org, _bot, version) => {
      loads++;
      return loaded(version);
    });
    const result = await retriever.retrieve({
      organizationId: "o",
      chatbotId: "empty",
      version: 0,
      question: "anything",
      embedder: undefined,
    });
    expect(result).toMatchObject({ passages: [], hasKnowledge: false });
    expect(loads).toBe(0);
    expect(retriever.has("o", "empty")).toBe(true);
  });
});
