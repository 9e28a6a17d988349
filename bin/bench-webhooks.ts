/**
 * The webhook part of `npm run bench` (bin/bench.ts runs it): figures on the local runtime, with
 * the production timings, every function's DynamoDB calls going through a counting proxy.
 *
 * 1. A turn's latency as the client sees it, for an organization without webhook endpoints and for
 *    one with three (interleaved turns): webhooks must not slow a turn.
 * 2. The delay from a turn's response to its reply's `message.created` delivery (median, p99).
 * 3. Throughput: events delivered per second, from a burst of conversations (written in batches,
 *    so the pipeline, not the writing, sets the pace) to one endpoint.
 * 4. The pipeline's DynamoDB calls per delivered event (fan-out and delivery), counted.
 */

import { randomUUID } from "node:crypto";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { BatchWriteCommand } from "@aws-sdk/lib-dynamodb";
import { createApiKey } from "#functions/domain/api-keys";
import { createChatbot } from "#functions/domain/chatbots";
import { systemClock } from "#functions/domain/context";
import { createOrganization } from "#functions/domain/organizations";
import { createWebhookEndpoint } from "#functions/domain/webhooks";
import { createDb } from "#functions/store/dynamodb";
import { items } from "#functions/store/items";
import { webhookSecretsCipher } from "#functions/webhooks/environment";
import { outboundPolicyFromEnvironment } from "#functions/webhooks/outbound";
import { startLocalRuntime } from "#lib/local/runtime";

const TURNS = 60;
const BURST = 400;

export interface WebhookFigures {
  turnWithout: Stats;
  turnWith: Stats;
  deliveryDelay: Stats;
  burst: { events: number; seconds: number; perSecond: number; writeSeconds: number };
  callsPerDelivery: Record<string, number>;
}

export interface Stats {
  median: number;
  p90: number;
  p99: number;
  count: number;
}

function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;
  return { median: at(0.5), p90: at(0.9), p99: at(0.99), count: sorted.length };
}

/** A receiver that answers 200 at once and notes when each event arrived (by message id or conversation). */
async function startReceiver() {
  const arrivals = new Map<string, number>();
  let count = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const at = performance.now() + performance.timeOrigin;
      count++;
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        type: string;
        data: { conversation_id: string; message?: { message_id: string } };
      };
      const key = body.data.message?.message_id ?? `${body.type}:${body.data.conversation_id}`;
      if (!arrivals.has(key)) arrivals.set(key, at);
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    arrivals,
    count: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Forwards to DynamoDB Local, counting the webhook pipeline's calls (those on its keys) by operation. */
async function pipelineCounter(target: string) {
  const counts = new Map<string, number>();
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (/#WEBHOOKS"|#WHEP#/.test(body.toString())) {
        const operation = String(req.headers["x-amz-target"] ?? "?").replace(/^DynamoDB_\d+\./, "");
        counts.set(operation, (counts.get(operation) ?? 0) + 1);
      }
      const forward = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (response) => {
          res.writeHead(response.statusCode ?? 500, response.headers);
          response.pipe(res);
        },
      );
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("the webhook benchmark timed out waiting for deliveries");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function measureWebhooks(): Promise<WebhookFigures> {
  const receiver = await startReceiver();
  const previous = {
    allow: process.env.OUTBOUND_ALLOW_PRIVATE,
    dynamo: process.env.AWS_ENDPOINT_URL_DYNAMODB,
  };
  process.env.OUTBOUND_ALLOW_PRIVATE = `127.0.0.1:${receiver.port}`;
  const runtime = await startLocalRuntime({ port: 0, environment: { LOG_LEVEL: "warn" } });
  const proxy = await pipelineCounter(runtime.dynamoDbEndpoint);
  process.env.AWS_ENDPOINT_URL_DYNAMODB = proxy.url;
  try {
    const ctx = { db: createDb(runtime.tableName, runtime.dynamoDb), clock: systemClock };
    const webhooks = {
      ...ctx,
      secrets: webhookSecretsCipher(runtime.webhookEnvironment),
      outbound: outboundPolicyFromEnvironment(),
      timings: { secretOverlapSeconds: 86_400 },
    };
    const tenant = async (name: string, endpoints: number) => {
      const organization = await createOrganization(ctx, { name, rateLimit: 100_000 });
      const { apiKey } = await createApiKey(ctx, {
        organizationId: organization.organizationId,
        name: "bench",
      });
      const chatbot = await createChatbot(ctx, {
        organizationId: organization.organizationId,
        name: "Bench bot",
      });
      for (let i = 0; i < endpoints; i++) {
        await createWebhookEndpoint(webhooks, {
          organizationId: organization.organizationId,
          url: `http://127.0.0.1:${receiver.port}/hook-${i}`,
          events: ["conversation.created", "message.created"],
        });
      }
      return { organizationId: organization.organizationId, apiKey, chatbotId: chatbot.chatbotId };
    };
    const plain = await tenant("Bench, no webhooks", 0);
    const hooked = await tenant("Bench, three endpoints", 3);
    const post = async (key: string, path: string, body: unknown) => {
      const response = await fetch(`${runtime.baseUrl}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return (await response.json()) as Record<string, unknown>;
    };
    const conversation = async (t: { apiKey: string; chatbotId: string }) =>
      String((await post(t.apiKey, "/api/conversation", { chatbot_id: t.chatbotId })).conversation_id);
    const [plainConversation, hookedConversation] = [await conversation(plain), await conversation(hooked)];

    // 1 and 2: interleaved turns; for the organization with endpoints, when its reply was delivered.
    const without: number[] = [];
    const withHooks: number[] = [];
    const responded = new Map<string, number>();
    for (let i = 0; i < TURNS + 5; i++) {
      for (const [t, id, into] of [
        [plain, plainConversation, without],
        [hooked, hookedConversation, withHooks],
      ] as const) {
        const started = performance.now();
        const answer = await post(t.apiKey, "/api/message", { conversation_id: id, message: "hello" });
        const done = performance.now();
        if (i < 5) continue; // warm-up
        into.push(done - started);
        if (t === hooked) {
          const reply = (answer.messages as { message_id: string }[] | undefined)?.[0]?.message_id;
          if (reply) responded.set(reply, done + performance.timeOrigin);
        }
      }
    }
    await until(() => [...responded.keys()].every((id) => receiver.arrivals.has(id)), 60_000);
    const delays = [...responded].map(([id, at]) => (receiver.arrivals.get(id) ?? Number.NaN) - at);

    // 3 and 4: a burst of conversations, one endpoint, counted from the first write to the last delivery.
    const burst = await tenant("Bench, burst", 1);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    proxy.counts.clear();
    const before = receiver.count();
    const started = performance.now();
    const createdAt = new Date().toISOString();
    const conversations = Array.from({ length: BURST }, () =>
      items.conversation({
        conversationId: randomUUID(),
        organizationId: burst.organizationId,
        chatbotId: burst.chatbotId,
        contactId: randomUUID(),
        status: "open",
        turns: 0,
        createdAt,
      }),
    );
    for (let start = 0; start < conversations.length; start += 25) {
      let pending: Record<string, unknown>[] = conversations
        .slice(start, start + 25)
        .map((item) => ({ PutRequest: { Item: item } }));
      while (pending.length > 0) {
        const result = await ctx.db.client.send(
          new BatchWriteCommand({ RequestItems: { [ctx.db.tableName]: pending } }),
        );
        pending =
          (result.UnprocessedItems?.[ctx.db.tableName] as Record<string, unknown>[] | undefined) ?? [];
      }
    }
    const writeSeconds = (performance.now() - started) / 1000;
    await until(() => receiver.count() - before >= BURST, 120_000);
    const seconds = (performance.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const callsPerDelivery = Object.fromEntries(
      [...proxy.counts].map(([operation, count]) => [operation, Number((count / BURST).toFixed(2))]),
    );
    return {
      turnWithout: stats(without),
      turnWith: stats(withHooks),
      deliveryDelay: stats(delays),
      burst: { events: BURST, seconds, perSecond: BURST / seconds, writeSeconds },
      callsPerDelivery,
    };
  } finally {
    await runtime.stop();
    await proxy.close();
    await receiver.close();
    for (const [name, value] of [
      ["OUTBOUND_ALLOW_PRIVATE", previous.allow],
      ["AWS_ENDPOINT_URL_DYNAMODB", previous.dynamo],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

export function printWebhookFigures(figures: WebhookFigures): void {
  const ms = (s: Stats) =>
    `median ${s.median.toFixed(0)} ms, p90 ${s.p90.toFixed(0)} ms, p99 ${s.p99.toFixed(0)} ms`;
  console.log(
    `\n8. Webhooks on the local runtime (production timings, ${TURNS} turns each, scripted engine)\n`,
  );
  console.log(`  turn latency, no endpoints:            ${ms(figures.turnWithout)}`);
  console.log(`  turn latency, three endpoints:         ${ms(figures.turnWith)}`);
  console.log(`  turn response → message.created:       ${ms(figures.deliveryDelay)}`);
  console.log(
    `  burst of ${figures.burst.events} events, one endpoint: ${figures.burst.perSecond.toFixed(0)} events/s delivered (${figures.burst.seconds.toFixed(1)} s from the first write to the last delivery; the writes alone took ${figures.burst.writeSeconds.toFixed(1)} s)`,
  );
  console.log(
    `  pipeline DynamoDB calls per delivered event: ${
      Object.entries(figures.callsPerDelivery)
        .map(([operation, count]) => `${count}×${operation}`)
        .join(" + ") || "none"
    }`,
  );
}
