/**
 * A turn's look-up tools, from the chatbot's stored tool items (read with the chatbot in one
 * Query): each configured from its template, its credentials decrypted only when a look-up is about
 * to call the platform, results cached in the conversation, requests capped per tool in the table.
 * Logs carry tool ids, outcome kinds and durations only.
 */

import { log } from "#functions/log";
import type { EnvelopeCipher } from "#functions/secrets/envelope";
import type { Db } from "#functions/store/dynamodb";
import { type Item, type LookupSummary, records, type ToolRecord } from "#functions/store/items";
import type { HttpGet } from "#functions/tools/http-get";
import { type ConfiguredTool, configureTool } from "#functions/tools/registry";
import {
  createTableLookupCache,
  createTableRequestLimiter,
  type ToolTableSettings,
} from "#functions/tools/table-state";
import { createLookupToolBox, type LookupToolBox } from "#functions/tools/toolbox";

/** Decrypted credentials by tool; kept a few minutes per Lambda instance so a turn rarely waits on KMS. */
export type SecretReader = (record: ToolRecord) => Promise<unknown>;

const SECRET_CACHE_MS = 5 * 60_000;

export function createSecretReader(
  cipher: EnvelopeCipher | undefined,
  now: () => number = Date.now,
): SecretReader {
  const cache = new Map<string, { value: Promise<unknown>; until: number }>();
  return (record) => {
    if (!record.credentials) return Promise.resolve({});
    const envelope = record.credentials;
    if (!cipher) return Promise.reject(new Error("no tool-credentials key is configured"));
    const key = `${record.organizationId}\n${record.toolId}\n${envelope}`;
    const cached = cache.get(key);
    if (cached && cached.until > now()) return cached.value;
    const value = cipher
      .decrypt(envelope, { organizationId: record.organizationId, toolId: record.toolId })
      .then((json) => JSON.parse(json) as unknown);
    value.catch(() => cache.delete(key));
    cache.set(key, { value, until: now() + SECRET_CACHE_MS });
    return value;
  };
}

export interface TurnToolsRequest {
  organizationId: string;
  chatbotId: string;
  conversationId: string;
  /** The chatbot partition's raw tool items. */
  toolItems: readonly Item[];
  visitorTexts: readonly string[];
  collected?: Readonly<Record<string, string>>;
  /** Epoch ms by which look-ups must be done. */
  deadline: number;
}

export interface TurnToolsDependencies {
  db: Db;
  clock: () => number;
  http: HttpGet;
  secrets: SecretReader;
}

/** The chatbot's usable tools, oldest first; a tool whose stored settings no longer configure is skipped. */
export function configuredTools(toolItems: readonly Item[]): { tool: ConfiguredTool; record: ToolRecord }[] {
  return toolItems
    .map(records.tool)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.toolId.localeCompare(b.toolId))
    .flatMap((record) => {
      const configured = configureTool({
        id: record.toolId,
        name: record.name,
        kind: record.kind as ConfiguredTool["kind"],
        config: record.config,
        ...(record.description ? { description: record.description } : {}),
      });
      if (configured.ok) return [{ tool: configured.tool, record }];
      log.warn("look-up tool does not configure; skipped", {
        toolId: record.toolId,
        issues: configured.issues.length,
      });
      return [];
    });
}

/** The turn's look-up tools, which also tell what look-ups they made (for the reply's item). */
export type TurnLookupToolBox = LookupToolBox & { lookups(): LookupSummary[] };

export function createTurnToolBox(
  request: TurnToolsRequest,
  dependencies: TurnToolsDependencies,
): TurnLookupToolBox | undefined {
  const usable = configuredTools(request.toolItems);
  if (usable.length === 0) return undefined;
  const byId = new Map(usable.map(({ tool, record }) => [tool.id, record]));
  const settings: ToolTableSettings = {
    db: dependencies.db,
    clock: dependencies.clock,
    organizationId: request.organizationId,
    chatbotId: request.chatbotId,
    conversationId: request.conversationId,
    toolInfo: (toolId) => {
      const record = byId.get(toolId);
      return record ? { requestsPerMinute: record.requestsPerMinute, version: record.updatedAt } : undefined;
    },
  };
  const made: LookupSummary[] = [];
  const box = createLookupToolBox({
    tools: usable.map(({ tool }) => tool),
    visitorTexts: request.visitorTexts,
    ...(request.collected ? { collected: request.collected } : {}),
    loadSecrets: async (tool) => {
      const record = byId.get(tool.id);
      if (!record) throw new Error("unknown tool");
      return dependencies.secrets(record);
    },
    http: dependencies.http,
    deadline: request.deadline,
    cache: createTableLookupCache(settings),
    limiter: createTableRequestLimiter(settings),
    now: dependencies.clock,
    observe: (observation) => {
      log.info("tool look-up", { ...observation });
      const record = byId.get(observation.toolId);
      made.push({
        toolId: observation.toolId,
        toolName: record?.name ?? observation.toolId,
        platform: record?.kind ?? "unknown",
        outcome: observation.kind,
        latencyMs: Math.round(observation.durationMs),
        ...(observation.cached ? { cached: true as const } : {}),
      });
    },
  });
  return Object.assign(box, { lookups: () => [...made] });
}
