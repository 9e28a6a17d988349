import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

import type { IDataObject, IHookFunctions } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import {
	ChatbotConversationTrigger,
	EVENT_OPTIONS,
} from '../nodes/ChatbotConversationTrigger/ChatbotConversationTrigger.node.ts';
import {
	CHAT_KEY,
	type FakeManagementApi,
	hookContext,
	MANAGE_KEY,
	startFakeManagementApi,
	webhookContext,
} from './fake-management-api.mts';

const trigger = new ChatbotConversationTrigger();
const { checkExists, create, delete: remove } = trigger.webhookMethods.default;
const WEBHOOK_URL = 'https://n8n.example.test/webhook/5f0c2b1e-7d3a-4c8e-9f1b-2a6d4e8c0b7f/webhook';
const EVENTS = ['message.created', 'conversation.created'];

describe('trigger description', () => {
	const { description } = trigger;

	it('is a trigger: name and display name say so, no inputs, not an AI tool', () => {
		expect(description.name).toBe('chatbotConversationTrigger');
		expect(description.displayName).toBe('Chatbot Conversation Trigger');
		expect(description.group).toEqual(['trigger']);
		expect(description.inputs).toEqual([]);
		expect(description.outputs).toEqual(['main']);
		expect(description.usableAsTool).toBeUndefined();
	});

	it('uses the management credential (a key of scope manage) and listens on one POST webhook', () => {
		expect(description.credentials).toEqual([
			{ name: 'chatbotConversationManageApi', required: true },
		]);
		expect(description.webhooks).toEqual([
			{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'webhook' },
		]);
	});

	it('offers exactly the event types the API sends (as its OpenAPI document lists them)', () => {
		const openapi = JSON.parse(
			readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'),
		) as {
			paths: Record<string, Record<string, { requestBody: IDataObject }>>;
		};
		const create = openapi.paths['/manage/webhook-endpoints']?.post?.requestBody as {
			content: { 'application/json': { schema: { properties: { events: IDataObject } } } };
		};
		const items = create.content['application/json'].schema.properties.events.items as {
			enum: string[];
		};
		expect(EVENT_OPTIONS.map((option) => option.value).sort()).toEqual([...items.enum].sort());
		const events = description.properties.find((property) => property.name === 'events');
		expect(events).toMatchObject({ type: 'multiOptions', required: true, default: [] });
		expect(events?.options).toBe(EVENT_OPTIONS);
	});

	it('lists its events in alphabetical order, each described (n8n lint convention)', () => {
		const names = EVENT_OPTIONS.map((option) => option.name);
		expect(names).toEqual([...names].sort());
		expect(EVENT_OPTIONS.every((option) => option.description.length > 0)).toBe(true);
	});

	it('tells the user, on the node, that it needs a key of scope manage', () => {
		const notice = description.properties.find((property) => property.type === 'notice');
		expect(notice?.displayName).toMatch(/scope "manage"/);
	});

	it('implements the whole webhook lifecycle (checkExists, create, delete) and webhook()', () => {
		expect(Object.keys(trigger.webhookMethods.default).sort()).toEqual([
			'checkExists',
			'create',
			'delete',
		]);
		expect(typeof trigger.webhook).toBe('function');
	});
});

describe('webhookMethods against a fake management API', () => {
	let api: FakeManagementApi;
	let staticData: IDataObject;
	const context = (overrides: { apiKey?: string; events?: string[]; webhookUrl?: string } = {}) =>
		hookContext({
			baseUrl: api.baseUrl,
			apiKey: overrides.apiKey ?? MANAGE_KEY,
			events: overrides.events ?? EVENTS,
			webhookUrl: overrides.webhookUrl ?? WEBHOOK_URL,
			staticData,
		});
	const run = (method: (this: IHookFunctions) => Promise<boolean>, ctx: IHookFunctions) =>
		method.call(ctx);

	beforeAll(async () => {
		api = await startFakeManagementApi();
	});
	afterAll(async () => {
		await api.close();
	});
	beforeEach(() => {
		api.reset();
		staticData = {};
	});

	it('create registers an endpoint for the node URL and events, and keeps its ID and secret', async () => {
		await expect(run(create, context())).resolves.toBe(true);

		expect(api.requests).toHaveLength(1);
		const [request] = api.requests;
		expect(request).toMatchObject({
			method: 'POST',
			path: '/manage/webhook-endpoints', // no doubled slash from the base URL's trailing one
			authorization: `Bearer ${MANAGE_KEY}`,
			body: {
				url: WEBHOOK_URL,
				events: EVENTS,
				description: 'n8n: workflow "Support alerts" (wf-42)',
			},
		});
		const [endpoint] = [...api.endpoints.values()];
		expect(staticData).toEqual({ endpointId: endpoint?.endpoint_id, secret: endpoint?.secret });
		expect(String(staticData.secret)).toMatch(/^whsec_/);
	});

	it('checkExists is false when nothing was registered, without calling the API', async () => {
		await expect(run(checkExists, context())).resolves.toBe(false);
		expect(api.requests).toEqual([]);
	});

	it('checkExists is true for the endpoint it registered, as long as it serves this node', async () => {
		await run(create, context());
		await expect(run(checkExists, context())).resolves.toBe(true);
		expect(api.requests.at(-1)).toMatchObject({
			method: 'GET',
			path: `/manage/webhook-endpoints/${String(staticData.endpointId)}`,
		});
		// the same events in another order still serve
		await expect(run(checkExists, context({ events: [...EVENTS].reverse() }))).resolves.toBe(true);
		expect(api.endpoints.size).toBe(1);
	});

	it('checkExists is false and forgets the endpoint when the API no longer has it', async () => {
		await run(create, context());
		api.endpoints.clear(); // deleted in the console, say
		await expect(run(checkExists, context())).resolves.toBe(false);
		expect(staticData).toEqual({});
	});

	const stale: { name: string; change: (api: FakeManagementApi) => void; ctx?: object }[] = [
		{ name: 'the events chosen changed', change: () => {}, ctx: { events: ['message.created'] } },
		{
			name: "n8n's webhook URL changed",
			change: () => {},
			ctx: { webhookUrl: 'https://n8n2.example.test/webhook/x/webhook' },
		},
		{
			name: 'the API disabled the endpoint',
			change: (fake) => {
				for (const endpoint of fake.endpoints.values()) endpoint.enabled = false;
			},
		},
		{
			name: 'its secret was rotated elsewhere',
			change: (fake) => {
				for (const endpoint of fake.endpoints.values()) {
					endpoint.previous_secret_expires_at = '2026-11-22T12:00:00.000Z';
				}
			},
		},
	];
	it.each(stale)(
		'checkExists replaces an endpoint that no longer serves this node: $name',
		async ({ change, ctx }) => {
			await run(create, context());
			const oldId = staticData.endpointId;
			change(api);
			await expect(run(checkExists, context(ctx))).resolves.toBe(false);
			expect(api.requests.at(-1)).toMatchObject({
				method: 'DELETE',
				path: `/manage/webhook-endpoints/${String(oldId)}`,
			});
			expect(api.endpoints.size).toBe(0);
			expect(staticData).toEqual({});
		},
	);

	it('checkExists replaces an endpoint whose secret it does not hold', async () => {
		await run(create, context());
		delete staticData.secret;
		await expect(run(checkExists, context())).resolves.toBe(false);
		expect(api.endpoints.size).toBe(0);
	});

	it('delete removes the endpoint and forgets it', async () => {
		await run(create, context());
		await expect(run(remove, context())).resolves.toBe(true);
		expect(api.requests.at(-1)?.method).toBe('DELETE');
		expect(api.endpoints.size).toBe(0);
		expect(staticData).toEqual({});
	});

	it('delete counts an endpoint that is gone already as deleted', async () => {
		await run(create, context());
		api.endpoints.clear();
		await expect(run(remove, context())).resolves.toBe(true);
		expect(staticData).toEqual({});
	});

	it('delete does nothing when nothing was registered', async () => {
		await expect(run(remove, context())).resolves.toBe(true);
		expect(api.requests).toEqual([]);
	});

	it('delete throws when the API fails, keeping the ID so a later activation finds the endpoint', async () => {
		await run(create, context());
		const kept = { ...staticData };
		api.failNext(503, { error: { code: 'service_unavailable', message: 'Service unavailable' } });
		const error = await run(remove, context()).catch((thrown: unknown) => thrown);
		expect(error).toBeInstanceOf(NodeApiError);
		expect((error as NodeApiError).httpCode).toBe('503');
		expect(staticData).toEqual(kept);
		expect(api.endpoints.size).toBe(1);
	});

	it('checkExists throws (and keeps the registration) when the API fails', async () => {
		await run(create, context());
		const kept = { ...staticData };
		api.failNext(500, { error: { code: 'internal', message: 'Internal error' } });
		await expect(run(checkExists, context())).rejects.toBeInstanceOf(NodeApiError);
		expect(staticData).toEqual(kept);
	});

	it('create with a key of scope chat fails and names the scope the trigger needs', async () => {
		const error = await run(create, context({ apiKey: CHAT_KEY })).catch(
			(thrown: unknown) => thrown,
		);
		expect(error).toBeInstanceOf(NodeApiError);
		expect((error as NodeApiError).message).toBe(
			'The API key may not manage webhook endpoints: the trigger needs a key of scope "manage"',
		);
		expect((error as NodeApiError).httpCode).toBe('403');
		// n8n shows only the description when activation fails: it must say what to do
		expect((error as NodeApiError).description).toMatch(
			/^This trigger needs an API key of scope "manage".*\(The Chatbot Conversation API answered HTTP 403 forbidden to POST \/manage\/webhook-endpoints\.\)$/,
		);
		expect(staticData).toEqual({});
	});

	it('create with a wrong key fails with the API message and a hint at the credential', async () => {
		const error = await run(create, context({ apiKey: 'cbk_wrong' })).catch(
			(thrown: unknown) => thrown,
		);
		expect(error).toBeInstanceOf(NodeApiError);
		expect((error as NodeApiError).message).toBe('Unauthenticated');
		expect((error as NodeApiError).description).toMatch(
			/^Unauthenticated: check the API key and the base URL/,
		);
	});

	it('create with a webhook URL the API refuses explains WEBHOOK_URL', async () => {
		const error = await run(
			create,
			context({ webhookUrl: 'http://localhost:5678/webhook/x/webhook' }),
		).catch((thrown: unknown) => thrown);
		expect(error).toBeInstanceOf(NodeApiError);
		expect((error as NodeApiError).message).toBe(
			'Validation failed: body.url: URL should use https',
		);
		expect((error as NodeApiError).description).toMatch(
			/^The API refused n8n's webhook URL \(body\.url: URL should use https\)\..*WEBHOOK_URL/,
		);
	});

	it('create without events fails before calling the API', async () => {
		await expect(run(create, context({ events: [] }))).rejects.toBeInstanceOf(NodeOperationError);
		expect(api.requests).toEqual([]);
	});

	it('create fails when the API is unreachable', async () => {
		const ctx = hookContext({
			baseUrl: 'http://127.0.0.1:9/',
			apiKey: MANAGE_KEY,
			events: EVENTS,
			webhookUrl: WEBHOOK_URL,
			staticData,
		});
		await expect(run(create, ctx)).rejects.toBeInstanceOf(NodeApiError);
		expect(staticData).toEqual({});
	});
});

describe('webhook(): every delivery is verified before the workflow starts', () => {
	const secret = `whsec_${randomBytes(32).toString('base64')}`;
	const otherSecret = `whsec_${randomBytes(32).toString('base64')}`;
	const event = {
		type: 'message.created',
		timestamp: '2026-11-21T12:00:00.000Z',
		data: {
			organization_id: 'org-1',
			chatbot_id: 'bot-1',
			conversation_id: 'conv-1',
			message: { message_id: 'm-1', role: 'user', content: 'Hello', attachments: [] },
		},
	};
	const body = JSON.stringify(event);
	const id = 'evt_abcdefghijklmnopqrstuvwx';

	function headersFor(
		secrets: string[],
		options: { timestamp?: number; payload?: string } = {},
	): Record<string, string> {
		const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
		return {
			'Content-Type': 'application/json',
			'Webhook-Id': id,
			'Webhook-Timestamp': String(timestamp),
			'Webhook-Signature': secrets
				.map((key) =>
					new Webhook(key).sign(id, new Date(timestamp * 1000), options.payload ?? body),
				)
				.join(' '),
		};
	}

	async function deliver(options: {
		headers: Record<string, string>;
		rawBody?: string;
		staticData?: IDataObject;
		events?: string[];
	}) {
		const { context, response } = webhookContext({
			staticData: options.staticData ?? { endpointId: 'ep-1', secret },
			events: options.events ?? EVENTS,
			headers: options.headers,
			rawBody: Buffer.from(options.rawBody ?? body, 'utf8'),
		});
		const result = await trigger.webhook.call(context);
		return { result, response };
	}

	it('starts the workflow with the event (its id, type, time and data) for a signed delivery', async () => {
		const { result, response } = await deliver({ headers: headersFor([secret]) });
		expect(response.status).toBeUndefined(); // n8n answers 200 itself (onReceived)
		expect(result).toEqual({
			workflowData: [[{ json: { event_id: id, ...event } }]],
		});
	});

	it('accepts a delivery signed by the old and the new secret during a rotation', async () => {
		const { result } = await deliver({ headers: headersFor([otherSecret, secret]) });
		expect(result.workflowData).toHaveLength(1);
	});

	const refused: { name: string; headers: () => Record<string, string>; rawBody?: string }[] = [
		{ name: 'unsigned', headers: () => ({ 'Content-Type': 'application/json' }) },
		{ name: 'signed with another secret', headers: () => headersFor([otherSecret]) },
		{
			name: 'a replay: signed 10 minutes ago',
			headers: () => headersFor([secret], { timestamp: Math.floor(Date.now() / 1000) - 600 }),
		},
		{
			name: 'the body changed after signing',
			headers: () => headersFor([secret]),
			rawBody: body.replace('Hello', 'Hi!!!'),
		},
		{
			name: 'the same JSON, re-serialized (the raw bytes are what is signed)',
			headers: () => headersFor([secret]),
			rawBody: JSON.stringify(event, null, 2),
		},
	];
	it.each(refused)('refuses with 401 and starts nothing: $name', async ({ headers, rawBody }) => {
		const { result, response } = await deliver({
			headers: headers(),
			...(rawBody ? { rawBody } : {}),
		});
		expect(result).toEqual({ noWebhookResponse: true });
		expect(response.status).toBe(401);
		expect(response.body).toMatchObject({ error: 'invalid_signature' });
	});

	it('refuses with 401 while the node holds no secret (not registered)', async () => {
		const { result, response } = await deliver({ headers: headersFor([secret]), staticData: {} });
		expect(result).toEqual({ noWebhookResponse: true });
		expect(response).toEqual({
			status: 401,
			body: { error: 'invalid_signature', reason: 'not_registered' },
		});
	});

	it('acknowledges a signed event the node does not listen to, and starts nothing', async () => {
		const { result, response } = await deliver({
			headers: headersFor([secret]),
			events: ['conversation.closed'],
		});
		expect(result.workflowData).toBeUndefined();
		expect(result.noWebhookResponse).toBeUndefined();
		expect(response.status).toBeUndefined();
	});

	it('answers 400 to a signed body that is not an event', async () => {
		const payload = '["not", "an", "event"]';
		const { result, response } = await deliver({
			headers: headersFor([secret], { payload }),
			rawBody: payload,
		});
		expect(result).toEqual({ noWebhookResponse: true });
		expect(response.status).toBe(400);
	});
});
