/**
 * The demo page `npm start` prints: a small shop page on an origin of its own (another port), with
 * the website widget's one script tag for the demo chatbot, under a strict Content-Security-Policy
 * (scripts and connections only from the console's origin, where the widget and the API are; no
 * 'unsafe-inline', no 'unsafe-eval'), as a business's page would carry it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface DemoPage {
  url: string;
  origin: string;
  close(): Promise<void>;
}

const styles = `body{margin:0;font:16px/1.5 Georgia,serif;color:#222;background:#faf7f2}
header{padding:24px 32px;background:#2d4a3e;color:#fff}main{max-width:720px;margin:0 auto;padding:32px}
h1{margin:0;font-size:28px}p{margin:0 0 16px}code{background:#eee;padding:2px 4px}`;

export function demoPageHtml(consoleUrl: string, chatbotId: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Demo shop</title>
<link rel="stylesheet" href="/page.css">
</head>
<body>
<header><h1>The demo shop</h1></header>
<main>
<p>This page stands for a business's own website, on an origin of its own. The chat in the corner is
the website widget, added with one script tag:</p>
<p><code>&lt;script src="${consoleUrl}/widget.js" data-chatbot-id="${chatbotId}" async&gt;&lt;/script&gt;</code></p>
<p>Ask it about shipping, returns or an order (order 1001, jan.jansen@example.nl), or for a person.</p>
</main>
<script src="${consoleUrl}/widget.js" data-chatbot-id="${chatbotId}" async></script>
</body>
</html>
`;
}

export function demoPagePolicy(consoleUrl: string): string {
  const consoleOrigin = new URL(consoleUrl).origin;
  return [
    "default-src 'none'",
    `script-src ${consoleOrigin}`,
    `connect-src ${consoleOrigin}`,
    "style-src 'self'",
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export async function startDemoPage(options: {
  port: number;
  host: string;
  consoleUrl: string;
  /** The demo chatbot (known once the demo data is seeded, after the page listens). */
  chatbotId: () => string;
}): Promise<DemoPage> {
  const policy = demoPagePolicy(options.consoleUrl);
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://demo").pathname;
    if (path === "/page.css") {
      res.writeHead(200, { "content-type": "text/css; charset=utf-8" }).end(styles);
      return;
    }
    if (path === "/favicon.ico") {
      res.writeHead(204).end();
      return;
    }
    if (path !== "/") {
      res.writeHead(404, { "content-type": "text/plain" }).end("Not found");
      return;
    }
    res
      .writeHead(200, { "content-type": "text/html; charset=utf-8", "content-security-policy": policy })
      .end(demoPageHtml(options.consoleUrl, options.chatbotId()));
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host}:${port}/`;
  return {
    url,
    origin: new URL(url).origin,
    close: () =>
      new Promise((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}
