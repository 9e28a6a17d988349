import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type {
	IDataObject,
	IHookFunctions,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
	INode,
	IWebhookFunctions,
} from 'n8n-workflow';

import { ChatbotConversationManageApi } from '../credentials/ChatbotConversationManageApi.credentials.ts';

export const MANAGE_KEY = 'cbk_manage_0123456789';
export const CHAT_KEY = 'cbk_chat_0123456789';

export interface FakeEndpoint {
	endpoint_id: string;
	url: string;
	events: string[];
	enabled: boolean;
	description: string | null;
	previous_secret_expires_at: string | null;
	secret: string;
}

export interface FakeRequest {
	method: string;
	path: string;
	authorization: string | undefined;
	body: unknown;
}

/**
 * A small stand-in for the API's webhook-endpoint routes (`/manage/webhook-endpoints`), on a real
 * port: Bearer keys of scope manage pass, scope chat gets 403, errors in the management format.
 * `failNext` makes the next request answer with a given status.
 */
export interface FakeManagementApi {
	baseUrl: string;
	endpoints: Map<string, FakeEndpoint>;
	requests: FakeRequest[];
	failNext(status: number, body?: unknown): void;
	/** Forgets every endpoint, request and pending failure. */
	reset(): void;
	close(): Promise<void>;
}

const PUBLIC_FIELDS = [
	'endpoint_id',
	'url',
	'events',
	'enabled',
	'description',
	'previous_secret_expires_at',
] as const;

function view(endpoint: FakeEndpoint): IDataObject {
	const shown: IDataObject = {};
	for (const field of PUBLIC_FIELDS) shown[field] = endpoint[field];
	return shown;
}

function send(response: ServerResponse, status: number, body?: unknown): void {
	if (body === undefined) {
		response.writeHead(status).end();
		return;
	}
	response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function managementError(code: string, message: string, details: IDataObject = {}) {
	return { error: { code, message, details } };
}

async function readBody(request: IncomingMessage): Promise<unknown> {
	const chunks: Buffer[] = [];
	for await (const chunk of request) chunks.push(chunk as Buffer);
	const text = Buffer.concat(chunks).toString('utf8');
	return text ? (JSON.parse(text) as unknown) : undefined;
}

export async function startFakeManagementApi(): Promise<FakeManagementApi> {
	const endpoints = new Map<string, FakeEndpoint>();
	const requests: FakeRequest[] = [];
	let failure: { status: number; body: unknown } | undefined;

	const server = createServer((request, response) => {
		void readBody(request).then((body) => {
			const path = request.url ?? '/';
			const method = request.method ?? 'GET';
			requests.push({ method, path, authorization: request.headers.authorization, body });
			if (failure) {
				const { status, body: failureBody } = failure;
				failure = undefined;
				send(response, status, failureBody);
				return;
			}
			if (request.headers.authorization === `Bearer ${CHAT_KEY}`) {
				send(response, 403, managementError('forbidden', 'Forbidden'));
				return;
			}
			if (request.headers.authorization !== `Bearer ${MANAGE_KEY}`) {
				send(response, 401, managementError('unauthenticated', 'Unauthenticated'));
				return;
			}
			const match = /^\/manage\/webhook-endpoints(?:\/([^/]+))?$/.exec(path);
			if (!match) {
				send(response, 404, managementError('route_not_found', 'Route not found'));
				return;
			}
			const id = match[1] === undefined ? undefined : decodeURIComponent(match[1]);
			if (id === undefined && method === 'POST') {
				const input = (body ?? {}) as IDataObject;
				if (typeof input.url !== 'string' || !input.url.startsWith('https://')) {
					send(
						response,
						422,
						managementError('invalid_argument', 'Invalid argument', {
							fields: [
								{ loc: ['body', 'url'], type: 'url_not_https', msg: 'URL should use https' },
							],
						}),
					);
					return;
				}
				const endpoint: FakeEndpoint = {
					endpoint_id: randomUUID(),
					url: input.url,
					events: (input.events as string[]) ?? [],
					enabled: true,
					description: typeof input.description === 'string' ? input.description : null,
					previous_secret_expires_at: null,
					secret: `whsec_${randomBytes(32).toString('base64')}`,
				};
				endpoints.set(endpoint.endpoint_id, endpoint);
				send(response, 201, { ...view(endpoint), secret: endpoint.secret });
				return;
			}
			if (id === undefined && method === 'GET') {
				send(response, 200, { webhook_endpoints: [...endpoints.values()].map(view) });
				return;
			}
			const endpoint = id === undefined ? undefined : endpoints.get(id);
			if (!endpoint || id === undefined) {
				send(
					response,
					404,
					managementError('webhook_endpoint_not_found', 'Webhook endpoint not found'),
				);
				return;
			}
			if (method === 'GET') {
				send(response, 200, view(endpoint));
				return;
			}
			if (method === 'DELETE') {
				endpoints.delete(id);
				send(response, 204);
				return;
			}
			send(response, 405, managementError('method_not_allowed', 'Method not allowed'));
		});
	});
	await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
	const { port } = server.address() as AddressInfo;
	return {
		baseUrl: `http://127.0.0.1:${port}/`,
		endpoints,
		requests,
		failNext: (status, body) => {
			failure = { status, body };
		},
		reset: () => {
			endpoints.clear();
			requests.length = 0;
			failure = undefined;
		},
		close: () => new Promise((done) => server.close(() => done())),
	};
}

export const triggerNode: INode = {
	id: 'trigger-1',
	name: 'Chatbot Conversation Trigger',
	type: 'n8n-nodes-chatbot-conversation.chatbotConversationTrigger',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
	webhookId: '5f0c2b1e-7d3a-4c8e-9f1b-2a6d4e8c0b7f',
};

export interface HookSetup {
	baseUrl: string;
	apiKey: string;
	events: string[];
	webhookUrl: string;
	/** The workflow's static data for the node: shared by every call, as n8n keeps it. */
	staticData: IDataObject;
}

/**
 * A fake IHookFunctions: n8n's context for webhookMethods. Requests go over real HTTP (fetch), with
 * the credential's own `authenticate` block applied, as n8n's httpRequestWithAuthentication does.
 */
export function hookContext(setup: HookSetup): IHookFunctions {
	const { authenticate } = new ChatbotConversationManageApi();
	const context = {
		getNode: () => triggerNode,
		getWorkflow: () => ({ id: 'wf-42', name: 'Support alerts', active: true }),
		getWorkflowStaticData: (type: string) => {
			if (type !== 'node') throw new Error(`unexpected static data type ${type}`);
			return setup.staticData;
		},
		getNodeWebhookUrl: (name: string) => (name === 'default' ? setup.webhookUrl : undefined),
		getNodeParameter: (name: string, fallback?: unknown) =>
			name === 'events' ? setup.events : fallback,
		getCredentials: async (type: string) => {
			if (type !== 'chatbotConversationManageApi') throw new Error(`unexpected credential ${type}`);
			return { baseUrl: setup.baseUrl, apiKey: setup.apiKey };
		},
		helpers: {
			httpRequestWithAuthentication: async (
				credentialType: string,
				options: IHttpRequestOptions,
			): Promise<IN8nHttpFullResponse> => {
				if (credentialType !== 'chatbotConversationManageApi') {
					throw new Error(`unexpected credential ${credentialType}`);
				}
				const headers: Record<string, string> = {};
				for (const [key, value] of Object.entries(options.headers ?? {})) {
					headers[key] = String(value);
				}
				for (const [key, template] of Object.entries(authenticate.properties.headers ?? {})) {
					headers[key] = String(template)
						.replace(/^=/, '')
						.replace('{{$credentials.apiKey}}', setup.apiKey);
				}
				if (options.body !== undefined) headers['content-type'] = 'application/json';
				const response = await fetch(options.url, {
					method: options.method ?? 'GET',
					headers,
					...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
				});
				const text = await response.text();
				if (!options.ignoreHttpStatusErrors && response.status >= 400) {
					throw new Error(`Request failed with status code ${response.status}`);
				}
				return {
					statusCode: response.status,
					headers: Object.fromEntries(response.headers.entries()),
					body: (text ? JSON.parse(text) : '') as IN8nHttpFullResponse['body'],
				};
			},
		},
	};
	return context as unknown as IHookFunctions;
}

export interface WebhookSetup {
	staticData: IDataObject;
	events: string[];
	headers: Record<string, string | string[]>;
	/** The request's body exactly as received. */
	rawBody: Buffer;
}

export interface RecordedResponse {
	status?: number;
	body?: unknown;
}

/** A fake IWebhookFunctions for webhook(): one incoming request, and the response it got. */
export function webhookContext(setup: WebhookSetup): {
	context: IWebhookFunctions;
	response: RecordedResponse;
} {
	const recorded: RecordedResponse = {};
	const response = {
		status(code: number) {
			recorded.status = code;
			return response;
		},
		json(body: unknown) {
			recorded.body = body;
			return response;
		},
		send(body: unknown) {
			recorded.body = body;
			return response;
		},
		end() {
			return response;
		},
	};
	const lowerCased: Record<string, string | string[]> = {};
	for (const [key, value] of Object.entries(setup.headers)) lowerCased[key.toLowerCase()] = value;
	const context = {
		getNode: () => triggerNode,
		getWorkflowStaticData: () => setup.staticData,
		getNodeParameter: (name: string, fallback?: unknown) =>
			name === 'events' ? setup.events : fallback,
		getHeaderData: () => lowerCased,
		getRequestObject: () => ({ rawBody: setup.rawBody, headers: lowerCased }),
		getResponseObject: () => response,
		getBodyData: () => JSON.parse(setup.rawBody.toString('utf8')) as IDataObject,
	};
	return { context: context as unknown as IWebhookFunctions, response: recorded };
}
