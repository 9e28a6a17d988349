/**
 * The benchmark's view of the table: a proxy in front of DynamoDB Local that records each call's
 * operation, key and consumed capacity, and can hold answers (to count round trips) or let a hook
 * see a call before it is forwarded (to stall the table then). Used by the calls section of
 * bin/bench.ts and by bin/bench-analytics.ts.
 */
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

export interface Call {
  operation: string;
  /** The first partition key's leading segment (`ORG`, `APIKEY`, …). */
  partitionKey: string;
  /** The request's body, as it came. */
  request: string;
  writeUnits: number;
  readUnits: number;
  /** performance.now() when the call arrived, and when its answer went back. */
  startedAt: number;
  endedAt: number;
}

/**
 * Forwards to DynamoDB Local and records each call's operation, first partition key and consumed
 * capacity (it adds ReturnConsumedCapacity to the request; DynamoDB Local does not check
 * signatures). `onCall`, when set, sees each call before it is forwarded (to stall the table then);
 * calls `ignore` picks out are forwarded but neither recorded nor shown to `onCall`.
 */
export async function countingProxy(
  target: string,
  options: { ignore?: (call: Call) => boolean } = {},
): Promise<{
  url: string;
  calls: Call[];
  onCall: ((call: Call) => void) | undefined;
  /** Holds every answer this long (to count round trips: calls sent together then overlap beyond doubt). */
  holdMs: number;
  close(): Promise<void>;
}> {
  const calls: Call[] = [];
  const hooks: { onCall: ((call: Call) => void) | undefined; holdMs: number } = {
    onCall: undefined,
    holdMs: 0,
  };
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let body = Buffer.concat(chunks);
      const operation = String(req.headers["x-amz-target"] ?? "?").replace(/^DynamoDB_\d+\./, "");
      const text = body.toString();
      const partitionKey = /"PK":\{"S":"([^"#]+)#/.exec(text)?.[1] ?? "";
      const call: Call = {
        operation,
        partitionKey,
        request: text,
        writeUnits: 0,
        readUnits: 0,
        startedAt: performance.now(),
        endedAt: Number.NaN,
      };
      if (!options.ignore?.(call)) {
        calls.push(call);
        hooks.onCall?.(call);
      }
      try {
        const parsed = JSON.parse(text) as Record<string, unknown>;
        if (operation !== "?" && operation !== "DescribeTable") {
          body = Buffer.from(JSON.stringify({ ...parsed, ReturnConsumedCapacity: "TOTAL" }));
        }
      } catch {
        // Not JSON: forwarded as it came.
      }
      const forward = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, "content-length": String(body.length) },
        },
        (response) => {
          const answer: Buffer[] = [];
          response.on("data", (chunk: Buffer) => answer.push(chunk));
          response.on("end", () => {
            const text = Buffer.concat(answer);
            countUnits(call, text.toString());
            const give = () => {
              if (res.destroyed) return;
              res.writeHead(response.statusCode ?? 500, response.headers);
              res.end(text, () => (call.endedAt = performance.now()));
            };
            if (hooks.holdMs > 0) setTimeout(give, hooks.holdMs);
            else give();
          });
        },
      );
      forward.on("error", () => res.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    get onCall() {
      return hooks.onCall;
    },
    set onCall(hook) {
      hooks.onCall = hook;
    },
    get holdMs() {
      return hooks.holdMs;
    },
    set holdMs(ms) {
      hooks.holdMs = ms;
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** Request units from an answer's ConsumedCapacity (one entry, or one per table of a transaction). */
function countUnits(call: Call, answer: string): void {
  let parsed: { ConsumedCapacity?: unknown } = {};
  try {
    parsed = JSON.parse(answer) as { ConsumedCapacity?: unknown };
  } catch {
    return;
  }
  const consumed = [parsed.ConsumedCapacity ?? []].flat() as {
    CapacityUnits?: number;
    ReadCapacityUnits?: number;
    WriteCapacityUnits?: number;
  }[];
  for (const entry of consumed) {
    const units = entry.CapacityUnits ?? 0;
    if (entry.WriteCapacityUnits !== undefined || entry.ReadCapacityUnits !== undefined) {
      call.writeUnits += entry.WriteCapacityUnits ?? 0;
      call.readUnits += entry.ReadCapacityUnits ?? 0;
    } else if (/^(Put|Update|Delete|BatchWrite|TransactWrite)/.test(call.operation)) {
      call.writeUnits += units;
    } else {
      call.readUnits += units;
    }
  }
}
