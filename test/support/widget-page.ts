/**
 * A business's page for the widget's browser tests: served on an origin of its own (`localhost`,
 * while the console and the API are on `127.0.0.1`), under a strict Content-Security-Policy that
 * allows scripts and connections only from the widget's origin (no 'unsafe-inline', no
 * 'unsafe-eval'), with style sheets of its own that try hard to reach into the widget. Pages in it
 * record every `securitypolicyviolation` event and the globals the widget adds.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { BrowserContext, Page } from "playwright-core";

export interface WidgetPages {
  origin: string;
  /** A page with the widget for `chatbotId` (`lang` on the html element). */
  url(chatbotId: string, options?: { lang?: string }): string;
  close(): Promise<void>;
}

/** What a hostile page does to everything it can reach: the widget must look the same regardless. */
export const hostileCss = `html{font-size:40px}*{font-family:"Comic Sans MS",cursive!important;color:#c00!important;
letter-spacing:3px!important;box-sizing:content-box!important;line-height:3!important}
div{display:block;padding:30px!important;border:4px dashed lime!important}button{background:#0f0!important;font-size:30px!important}
body{margin:0;padding:24px}#own-button{width:200px}`;

export function widgetPagePolicy(widgetOrigin: string): string {
  return [
    "default-src 'none'",
    `script-src ${widgetOrigin}`,
    `connect-src ${widgetOrigin}`,
    "style-src 'self'",
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

export async function startWidgetPages(widgetUrl: string): Promise<WidgetPages> {
  const widgetOrigin = new URL(widgetUrl).origin;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://page");
    if (url.pathname === "/favicon.ico") {
      res.writeHead(204).end();
      return;
    }
    if (url.pathname === "/page.css") {
      res.writeHead(200, { "content-type": "text/css" }).end(hostileCss);
      return;
    }
    const chatbotId = url.searchParams.get("bot") ?? "";
    const lang = url.searchParams.get("lang") ?? "en";
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": widgetPagePolicy(widgetOrigin),
    });
    res.end(`<!doctype html><html lang="${lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>A shop</title>
<link rel="stylesheet" href="/page.css"></head>
<body><main><h1>A shop</h1><p>Products and prices.</p><button id="own-button" type="button">Buy now</button></main>
<script src="${widgetUrl}" data-chatbot-id="${chatbotId}" async></script></body></html>`);
  });
  await new Promise<void>((resolveListen) => server.listen(0, "127.0.0.1", resolveListen));
  const { port } = server.address() as AddressInfo;
  // `localhost`, not 127.0.0.1: another origin than the console's.
  const origin = `http://localhost:${port}`;
  return {
    origin,
    url: (chatbotId, options = {}) =>
      `${origin}/?bot=${chatbotId}${options.lang ? `&lang=${encodeURIComponent(options.lang)}` : ""}`,
    close: () =>
      new Promise((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}

/**
 * Records, in every page of `context`, the CSP violations it reports and the globals present before
 * any script of the page ran (an init script runs through the DevTools protocol, outside the CSP).
 */
export async function recordPageEvents(context: BrowserContext): Promise<void> {
  await context.addInitScript(`
    window.__violations = [];
    document.addEventListener("securitypolicyviolation", (event) => {
      window.__violations.push(event.violatedDirective + " " + event.blockedURI + " " + event.sourceFile + ":" + event.lineNumber);
    });
    window.__globalsBefore = Object.getOwnPropertyNames(window);
  `);
}

export const violations = (page: Page): Promise<string[]> => page.evaluate<string[]>("window.__violations");

/** Globals the page gained since it began, apart from the recorder's own. */
export const newGlobals = (page: Page): Promise<string[]> =>
  page.evaluate<string[]>(
    `Object.getOwnPropertyNames(window).filter((name) => !window.__globalsBefore.includes(name) && !name.startsWith("__"))`,
  );
