/**
 * What webhook tests share: a domain context for the webhook functions (the runtime's key file,
 * queue and local-address allowance), named receivers on the suite's receiver server, and polling.
 * Endpoints are seeded through the domain functions, as the management routes will call them.
 */
import { SQSClient } from "@aws-sdk/client-sqs";
import type { WebhooksContext } from "#functions/domain/webhooks";
import { createLocalEnvelopeCipher } from "#functions/secrets/envelope";
import { outboundPolicyFromEnvironment } from "#functions/webhooks/outbound";
import { createSqsDeliveryQueue } from "#functions/webhooks/queue";
import type { Answer, ReceivedDelivery } from "#test/fakes/webhook-receiver";
import { domain, environment } from "#test/support/harness";

export type { Answer, ReceivedDelivery };

let context: WebhooksContext | undefined;

/** The domain context webhook functions get in these tests (overlap of rotated secrets: 60 s). */
export function webhooksContext(overrides: Partial<WebhooksContext> = {}): WebhooksContext {
  if (!context) {
    const { webhookSecretsKeyFile, webhookQueueUrl, sqsEndpoint, webhookReceiverUrl } = environment;
    if (!webhookSecretsKeyFile || !webhookQueueUrl || !sqsEndpoint || !webhookReceiverUrl)
      throw new Error("webhook tests run against the local runtime only");
    const sqs = new SQSClient({
      endpoint: sqsEndpoint,
      region: environment.region,
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    });
    context = {
      ...domain(),
      secrets: createLocalEnvelopeCipher({ keyFile: webhookSecretsKeyFile }),
      queue: createSqsDeliveryQueue(sqs, webhookQueueUrl),
      outbound: outboundPolicyFromEnvironment({
        OUTBOUND_ALLOW_PRIVATE: new URL(webhookReceiverUrl).host,
      }),
      timings: { secretOverlapSeconds: 60 },
    };
  }
  return { ...context, ...overrides };
}

/** A named receiver on the suite's receiver server. */
export interface TestReceiver {
  url: string;
  configure(settings: { secrets?: string[]; script?: Answer[]; otherwise?: Answer }): Promise<void>;
  requests(): Promise<ReceivedDelivery[]>;
  /** Requests still waiting for an answer (hanging). */
  open(): Promise<number>;
}

export function receiver(name: string): TestReceiver {
  const base = environment.webhookReceiverUrl;
  if (!base) throw new Error("webhook tests run against the local runtime only");
  const control = `${base}/_control/receivers/${name}`;
  return {
    url: `${base}/hooks/${name}`,
    async configure(settings) {
      await fetch(control, { method: "PUT", body: JSON.stringify(settings) });
    },
    async requests() {
      return (await (await fetch(`${control}/requests`)).json()) as ReceivedDelivery[];
    },
    async open() {
      return ((await (await fetch(`${control}/open`)).json()) as { open: number }).open;
    },
  };
}

/** Polls `probe` until `done` accepts its value (or the time is up, then fails with the last value). */
export async function eventually<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(
        `condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value).slice(0, 2000)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

export interface WebhookBody {
  type: string;
  timestamp: string;
  data: Record<string, unknown> & {
    organization_id: string;
    chatbot_id: string | null;
    conversation_id: string;
  };
}

export const bodyOf = (delivery: ReceivedDelivery): WebhookBody => JSON.parse(delivery.body) as WebhookBody;
