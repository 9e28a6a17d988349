import { request as httpRequest, type IncomingMessage } from 'node:http';

import type {
	ChunkType,
	IBinaryData,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
	INode,
	INodeExecutionData,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { ChatbotConversationApi } from '../credentials/ChatbotConversationApi.credentials.ts';
import { ChatbotConversation } from '../nodes/ChatbotConversation/ChatbotConversation.node.ts';

export const API_KEY = 'cbk_test_0123456789';
/** The key of the management credential (scope manage). */
export const MANAGE_KEY = 'cbk_manage_9876543210';
export const BASE_URL = 'https://api-v1.example.test/';

/** What the API answers to one request, or the network error the helper throws. */
export type FakeAnswer =
	| { statusCode: number; body: unknown; headers?: Record<string, string> }
	| { networkError: Error };

export interface RecordedCall {
	credentialType: string;
	method: string;
	url: string;
	qs: IDataObject | undefined;
	body: unknown;
	/** Headers as sent, after the credential's `authenticate` block was applied. */
	headers: Record<string, string>;
	options: IHttpRequestOptions;
}

export interface FakeSetup {
	/** Node parameters, the same for every item, or per item (as expressions would give). */
	params: Record<string, unknown> | ((itemIndex: number) => Record<string, unknown>);
	items?: INodeExecutionData[];
	answers: FakeAnswer[];
	continueOnFail?: boolean;
	credentials?: { baseUrl: string; apiKey: string; streamUrl?: string };
	/** The management credential (Reply as Person); left out: BASE_URL and MANAGE_KEY. */
	manageCredentials?: { baseUrl: string; apiKey: string };
	/** What `isStreaming()` answers; left out, the context has no such method (older n8n). */
	streaming?: boolean;
	/** What `isToolExecution()` answers (false when left out). */
	toolExecution?: boolean;
	/** Called on every `sendChunk`, as it happens. */
	onChunk?: (chunk: SentChunk) => void;
}

/** One `sendChunk` call of the node. */
export interface SentChunk {
	type: ChunkType;
	itemIndex: number;
	content?: string;
}

export const fakeNode: INode = {
	id: 'node-1',
	name: 'Chatbot Conversation',
	type: 'n8n-nodes-chatbot-conversation.chatbotConversation',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};

/** Applies the credential's real `authenticate` block the way n8n does for a generic one. */
function authenticatedHeaders(
	headers: IDataObject | undefined,
	credentials: { apiKey: string },
): Record<string, string> {
	const { authenticate } = new ChatbotConversationApi();
	const result: Record<string, string> = {};
	for (const [key, value] of Object.entries(headers ?? {})) result[key] = String(value);
	for (const [key, template] of Object.entries(authenticate.properties.headers ?? {})) {
		result[key] = String(template)
			.replace(/^=/, '')
			.replace('{{$credentials.apiKey}}', credentials.apiKey);
	}
	return result;
}

/**
 * What n8n's helper does for `encoding: 'stream'` (axios with `responseType: 'stream'`): a real
 * request, its body handed back unread as a Node stream. Only http:// URLs (the tests' servers).
 */
function streamedRequest(
	options: IHttpRequestOptions,
	headers: Record<string, string>,
): Promise<IN8nHttpFullResponse> {
	return new Promise((resolve, reject) => {
		const payload = options.json ? JSON.stringify(options.body) : String(options.body ?? '');
		const outgoing = httpRequest(
			options.url,
			{
				method: options.method ?? 'GET',
				headers: { ...headers, 'Content-Type': 'application/json' },
			},
			(response: IncomingMessage) => {
				resolve({
					statusCode: response.statusCode ?? 0,
					headers: response.headers as IDataObject,
					body: response,
				});
			},
		);
		outgoing.on('error', reject);
		outgoing.end(payload);
	});
}

/** A fake IExecuteFunctions: enough of n8n's context for execute() of this node. */
export function createContext(setup: FakeSetup) {
	const calls: RecordedCall[] = [];
	const chunks: SentChunk[] = [];
	const answers = [...setup.answers];
	const items: INodeExecutionData[] = setup.items ?? [{ json: {} }];
	const credentials = setup.credentials ?? { baseUrl: BASE_URL, apiKey: API_KEY };
	const manageCredentials = setup.manageCredentials ?? { baseUrl: BASE_URL, apiKey: MANAGE_KEY };
	const credentialsOf = (type: string) => {
		if (type === 'chatbotConversationApi') return credentials;
		if (type === 'chatbotConversationManageApi') return manageCredentials;
		throw new Error(`unexpected credential type ${type}`);
	};

	const paramsFor = (itemIndex: number): Record<string, unknown> =>
		typeof setup.params === 'function' ? setup.params(itemIndex) : setup.params;

	const binaryOf = (itemIndex: number, propertyName: string): IBinaryData => {
		const binary = items[itemIndex]?.binary?.[propertyName];
		if (!binary) {
			throw new NodeOperationError(
				fakeNode,
				`This operation expects the node's input data to contain a binary file '${propertyName}', but none was found [item ${itemIndex}]`,
				{ itemIndex },
			);
		}
		return binary;
	};

	const context = {
		getInputData: () => items,
		getNode: () => fakeNode,
		continueOnFail: () => setup.continueOnFail ?? false,
		getCredentials: async (type: string) => credentialsOf(type),
		getNodeParameter: (name: string, itemIndex: number, fallback?: unknown) => {
			const value = paramsFor(itemIndex)[name];
			if (value !== undefined) return value;
			if (fallback !== undefined) return fallback;
			throw new Error(`Could not get parameter "${name}"`);
		},
		helpers: {
			httpRequestWithAuthentication: async (
				credentialType: string,
				options: IHttpRequestOptions,
			): Promise<IN8nHttpFullResponse> => {
				const headers = authenticatedHeaders(options.headers, credentialsOf(credentialType));
				calls.push({
					credentialType,
					method: options.method ?? 'GET',
					url: options.url,
					qs: options.qs,
					body: options.body,
					headers,
					options,
				});
				if (options.encoding === 'stream') {
					if (!options.returnFullResponse || !options.ignoreHttpStatusErrors) {
						throw new Error('the stream request is expected to ask for the full response');
					}
					return await streamedRequest(options, headers);
				}
				const answer = answers.shift();
				if (!answer) throw new Error(`no fake answer left for ${options.method} ${options.url}`);
				if ('networkError' in answer) throw answer.networkError;
				if (!options.ignoreHttpStatusErrors && answer.statusCode >= 400) {
					throw new Error(`Request failed with status code ${answer.statusCode}`);
				}
				const full: IN8nHttpFullResponse = {
					statusCode: answer.statusCode,
					headers: answer.headers ?? { 'content-type': 'application/json' },
					body: answer.body as IN8nHttpFullResponse['body'],
				};
				return options.returnFullResponse ? full : (answer.body as IN8nHttpFullResponse);
			},
			assertBinaryData: (itemIndex: number, propertyName: string) =>
				binaryOf(itemIndex, propertyName),
			getBinaryDataBuffer: async (itemIndex: number, propertyName: string) =>
				Buffer.from(binaryOf(itemIndex, propertyName).data, 'base64'),
		},
	};

	const streamingMethods: Record<string, unknown> =
		setup.streaming === undefined
			? {}
			: {
					isStreaming: () => setup.streaming,
					isToolExecution: () => setup.toolExecution ?? false,
					sendChunk: (type: ChunkType, itemIndex: number, content?: string) => {
						const chunk: SentChunk =
							content === undefined ? { type, itemIndex } : { type, itemIndex, content };
						chunks.push(chunk);
						setup.onChunk?.(chunk);
					},
				};
	Object.assign(context, streamingMethods);

	return { context: context as unknown as IExecuteFunctions, calls, chunks };
}

/** Runs the node's execute() against the fake context. */
export async function run(setup: FakeSetup) {
	const { context, calls, chunks } = createContext(setup);
	const [output = []] = await new ChatbotConversation().execute.call(context);
	return { output, calls, chunks };
}

export const ok = (body: unknown): FakeAnswer => ({ statusCode: 200, body });
