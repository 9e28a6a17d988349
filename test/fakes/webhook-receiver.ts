/**
 * Webhook receivers for the tests: one local server, many named receivers at `/hooks/{name}`.
 * Each verifies every delivery with the reference Standard Webhooks library (`standardwebhooks`),
 * once per secret it was given (so a rotation's two signatures can be checked one by one), records
 * it, and answers as scripted: a status, a delay, a hang (no answer until the client gives up), or
 * a redirect. Tests in other workers drive it over a small control API:
 *
 *   PUT  /_control/receivers/{name}            {"secrets": [...], "script": [Answer…], "otherwise": Answer}
 *   GET  /_control/receivers/{name}/requests   [Delivery…]
 *   GET  /_control/receivers/{name}/open       {"open": n}   requests still waiting for an answer
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export type Answer =
  | { kind: "status"; status: number; body?: string; delayMs?: number }
  | { kind: "hang" }
  | { kind: "redirect"; location: string };

export interface ReceivedDelivery {
  at: number;
  path: string;
  webhookId: string;
  webhookTimestamp: string;
  signatures: string[];
  body: string;
  /** For each configured secret, in order: whether the library verified the delivery with it. */
  verified: boolean[];
  answer: Answer["kind"];
}

interface Receiver {
  secrets: string[];
  script: Answer[];
  otherwise: Answer;
  requests: ReceivedDelivery[];
  open: Set<ServerResponse>;
}

export interface WebhookReceiverHub {
  port: number;
  baseUrl: string;
  close(): Promise<void>;
}

export async function startWebhookReceiverHub(): Promise<WebhookReceiverHub> {
  const receivers = new Map<string, Receiver>();
  const receiverFor = (name: string): Receiver => {
    let receiver = receivers.get(name);
    if (!receiver) {
      receiver = {
        secrets: [],
        script: [],
        otherwise: { kind: "status", status: 200 },
        requests: [],
        open: new Set(),
      };
      receivers.set(name, receiver);
    }
    return receiver;
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const url = new URL(req.url ?? "/", "http://hub");
      const control = /^\/_control\/receivers\/([\w-]+)(\/requests|\/open)?$/.exec(url.pathname);
      if (control?.[1]) return handleControl(control[1], control[2], req, res, body);
      const hook = /^\/hooks\/([\w-]+)$/.exec(url.pathname);
      if (req.method === "POST" && hook?.[1])
        return handleDelivery(receiverFor(hook[1]), req, res, body, url.pathname);
      res.writeHead(404).end();
    });
  });

  function handleControl(
    name: string,
    sub: string | undefined,
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
  ): void {
    const receiver = receiverFor(name);
    res.setHeader("content-type", "application/json");
    if (req.method === "PUT" && !sub) {
      const settings = JSON.parse(body || "{}") as Partial<
        Pick<Receiver, "secrets" | "script" | "otherwise">
      >;
      if (settings.secrets) receiver.secrets = settings.secrets;
      if (settings.script) receiver.script = [...settings.script];
      if (settings.otherwise) receiver.otherwise = settings.otherwise;
      res.end("{}");
      return;
    }
    if (req.method === "GET" && sub === "/requests") return void res.end(JSON.stringify(receiver.requests));
    if (req.method === "GET" && sub === "/open")
      return void res.end(JSON.stringify({ open: receiver.open.size }));
    res.writeHead(404).end("{}");
  }

  function handleDelivery(
    receiver: Receiver,
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    path: string,
  ): void {
    const header = (name: string) => String(req.headers[name] ?? "");
    const headers = {
      "webhook-id": header("webhook-id"),
      "webhook-timestamp": header("webhook-timestamp"),
      "webhook-signature": header("webhook-signature"),
    };
    const verified = receiver.secrets.map((secret) => {
      try {
        new Webhook(secret).verify(body, headers);
        return true;
      } catch {
        return false;
      }
    });
    const answer = receiver.script.shift() ?? receiver.otherwise;
    receiver.requests.push({
      at: Date.now(),
      path,
      webhookId: headers["webhook-id"],
      webhookTimestamp: headers["webhook-timestamp"],
      signatures: headers["webhook-signature"].split(" ").filter(Boolean),
      body,
      verified,
      answer: answer.kind,
    });
    switch (answer.kind) {
      case "hang":
        receiver.open.add(res);
        res.on("close", () => receiver.open.delete(res));
        return;
      case "redirect":
        res.writeHead(302, { location: answer.location }).end();
        return;
      case "status": {
        const send = () =>
          res.writeHead(answer.status, { "content-type": "text/plain" }).end(answer.body ?? "ok");
        if (answer.delayMs) setTimeout(send, answer.delayMs);
        else send();
      }
    }
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
