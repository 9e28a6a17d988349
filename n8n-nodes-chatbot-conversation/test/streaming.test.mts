import { NodeApiError } from 'n8n-workflow';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { ChatbotConversationApi } from '../credentials/ChatbotConversationApi.credentials.ts';
import {
	BROKEN_OFF_SEPARATOR,
	MESSAGE_SEPARATOR,
} from '../nodes/ChatbotConversation/StreamedReply.ts';
import { ServerSentEventParser } from '../nodes/ChatbotConversation/ServerSentEvents.ts';
import { API_KEY, BASE_URL, type FakeSetup, ok, run, type SentChunk } from './fake-context.mts';
import {
	type FakeStreamServer,
	type StreamAnswer,
	sse,
	startFakeStreamServer,
} from './fake-stream-server.mts';

const CONVERSATION = '22222222-2222-4222-8222-222222222222';
const sendParams = {
	resource: 'message',
	operation: 'send',
	conversationId: CONVERSATION,
	text: 'Wann kommt mein Paket?',
};

const stored = (id: string, content: string) => ({
	message_id: id,
	role: 'assistant',
	content,
	created_at: '2026-11-21T12:00:01.250Z',
});

/** The events of one reply message, its text in the given deltas. */
function messageEvents(id: string, deltas: string[], status = 'open', newline = '\n'): string {
	return (
		sse('message.start', { conversation_id: CONVERSATION, message_id: id, status }, newline) +
		deltas.map((text) => sse('message.delta', { text }, newline)).join('') +
		sse('message.end', stored(id, deltas.join('')), newline)
	);
}

let server: FakeStreamServer | undefined;
afterEach(async () => {
	await server?.close();
	server = undefined;
});

async function streamRun(answers: StreamAnswer[], setup: Partial<FakeSetup> = {}) {
	server = await startFakeStreamServer(answers);
	const result = await run({
		params: sendParams,
		answers: [],
		streaming: true,
		credentials: { baseUrl: BASE_URL, apiKey: API_KEY, streamUrl: `${server.url}/` },
		...setup,
	});
	return { ...result, requests: server.requests };
}

/** The error a streamed run must fail with: always a NodeApiError. */
async function streamFailure(answers: StreamAnswer[]): Promise<NodeApiError> {
	const error = await streamRun(answers).then(
		() => undefined,
		(thrown: unknown) => thrown,
	);
	expect(error).toBeInstanceOf(NodeApiError);
	return error as NodeApiError;
}

const textOf = (chunks: SentChunk[]) =>
	chunks
		.filter((chunk) => chunk.type === 'item')
		.map((chunk) => chunk.content)
		.join('');

describe('Message → Send streams the reply into n8n when the run streams', () => {
	// "ü" and "€" are two and three bytes: 5-byte pieces split them, and every event and line
	const first = ['Ihr Paket ', 'ist unterwegs ', 'und kommt morgen (Zustellung 4,95 €).'];
	const second = ['Kann ich ', 'sonst noch helfen?'];
	const events = messageEvents('m-1', first) + messageEvents('m-2', second);
	const storedAnswer = {
		conversation_id: CONVERSATION,
		status: 'open',
		messages: [stored('m-1', first.join('')), stored('m-2', second.join(''))],
	};

	// the 5-byte pieces that hold the first delta event completely
	const firstDelta = sse('message.delta', { text: first[0] });
	const firstDeltaEnd = events.indexOf(firstDelta) + firstDelta.length;
	const piecesThroughFirstDelta = Math.ceil(Buffer.byteLength(events.slice(0, firstDeltaEnd)) / 5);

	it('POSTs {Stream URL}/api/message/stream, forwards each delta as it arrives, and outputs what POST /api/message outputs', async () => {
		const { output, chunks, requests, calls } = await streamRun(
			[{ events, pieceSize: 5, holdAfterPiece: piecesThroughFirstDelta }],
			{
				params: { ...sendParams, options: { idempotencyKey: 'turn-1' } },
				// the server holds the rest of the body back until the node has forwarded a delta:
				// a node that waited for the whole body would never get it
				onChunk: (chunk) => {
					if (chunk.type === 'item') server?.release();
				},
			},
		);

		expect(calls).toHaveLength(1);
		expect(calls[0]?.options.encoding).toBe('stream');
		expect(requests).toHaveLength(1);
		expect(requests[0]?.method).toBe('POST');
		expect(requests[0]?.url).toBe('/api/message/stream');
		expect(requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
		expect(requests[0]?.headers['idempotency-key']).toBe('turn-1');
		expect(requests[0]?.headers.accept).toBe('text/event-stream');
		expect(requests[0]?.body).toEqual({ conversation_id: CONVERSATION, message: sendParams.text });

		expect(chunks[0]).toEqual({ type: 'begin', itemIndex: 0 });
		expect(chunks.at(-1)).toEqual({ type: 'end', itemIndex: 0 });
		expect(chunks.filter((chunk) => chunk.type === 'begin')).toHaveLength(1);
		expect(chunks.filter((chunk) => chunk.type === 'end')).toHaveLength(1);
		expect(chunks.slice(1, -1).map((chunk) => chunk.content)).toEqual([
			...first,
			`${MESSAGE_SEPARATOR}${second[0]}`,
			second[1],
		]);
		expect(chunks.every((chunk) => chunk.itemIndex === 0)).toBe(true);

		const unstreamed = await run({ params: sendParams, answers: [ok(storedAnswer)] });
		expect(output).toEqual(unstreamed.output);
		expect(output).toHaveLength(2);
	});

	it('Single Item output: the same item as without streaming; the streamed text is its reply', async () => {
		const params = { ...sendParams, options: { output: 'single' } };
		const { output, chunks } = await streamRun(
			[{ events: events.replaceAll('\n', '\r\n'), pieceSize: 3 }],
			{ params },
		);
		const unstreamed = await run({ params, answers: [ok(storedAnswer)] });
		expect(output).toEqual(unstreamed.output);
		expect(textOf(chunks)).toBe(output[0]?.json.reply);
	});

	it('an error event mid-reply: the separator, then the fallback is forwarded; the output is the stored fallback', async () => {
		const fallback = 'Entschuldigung, das kann ich gerade nicht beantworten.';
		const broken =
			sse('message.start', { conversation_id: CONVERSATION, message_id: 'm-1', status: 'open' }) +
			sse('message.delta', { text: 'Ihr Paket ' }) +
			sse('message.delta', { text: 'ist unter' }) +
			sse('error', { detail: 'The model stopped sending its reply' }) +
			sse('message.delta', { text: fallback }) +
			sse('message.end', stored('m-1', fallback));
		const { output, chunks } = await streamRun([{ events: broken, pieceSize: 7 }]);

		expect(chunks.map((chunk) => chunk.type)).toEqual(['begin', 'item', 'item', 'item', 'end']);
		expect(chunks[3]?.content).toBe(`${BROKEN_OFF_SEPARATOR}${fallback}`);
		const unstreamed = await run({
			params: sendParams,
			answers: [
				ok({ conversation_id: CONVERSATION, status: 'open', messages: [stored('m-1', fallback)] }),
			],
		});
		expect(output).toEqual(unstreamed.output);
	});

	it('an error before any text of the message: no separator, just the fallback', async () => {
		const fallback = 'Sorry, I cannot answer that right now.';
		const broken =
			sse('message.start', { conversation_id: CONVERSATION, message_id: 'm-1', status: 'open' }) +
			sse('error', { detail: 'The reply took too long' }) +
			sse('message.delta', { text: fallback }) +
			sse('message.end', stored('m-1', fallback));
		const { output, chunks } = await streamRun([{ events: broken, pieceSize: 4 }]);
		expect(textOf(chunks)).toBe(fallback);
		expect(output[0]?.json.content).toBe(fallback);
	});

	it('an error and no message.end (the reply was not stored): an API error with its detail; continue on fail gives an error item', async () => {
		const broken =
			sse('message.start', { conversation_id: CONVERSATION, message_id: 'm-1', status: 'open' }) +
			sse('message.delta', { text: 'Ihr Paket' }) +
			sse('error', { detail: 'Service temporarily unavailable' });
		const { output, chunks } = await streamRun([{ events: broken, pieceSize: 6 }], {
			continueOnFail: true,
		});
		expect(chunks.map((chunk) => chunk.type)).toEqual(['begin', 'item', 'end']);
		expect(output).toHaveLength(1);
		expect(output[0]?.json.error).toBe('Service temporarily unavailable');
		expect(String(output[0]?.json.description)).toContain('same Idempotency-Key');
		expect(output[0]?.pairedItem).toEqual({ item: 0 });
	});

	it('the connection cut mid-reply: an API error saying the stream broke off', async () => {
		const events = messageEvents('m-1', ['Ihr Paket ', 'ist unterwegs.']);
		const error = await streamFailure([{ events, pieceSize: 8, cutAfterPiece: 15 }]);
		expect(error.message).toBe('The reply stream broke off');
		expect(error.description).toContain('same Idempotency-Key');
	});

	it('an event that is not JSON: an API error, and the node closes the connection', async () => {
		const events =
			'event: message.start\ndata: {not json\n\n' + messageEvents('m-1', ['never read']);
		const error = await streamFailure([{ events, pieceSize: 10, holdAfterPiece: 6 }]);
		expect(error.message).toBe(
			'The reply stream sent a "message.start" event that is not a JSON object',
		);
		// the server still holds the rest of the body back: only the node can have closed it
		await vi.waitFor(() => expect(server?.closedEarly()).toBe(1), { timeout: 4_000 });
	});

	it('a JSON error answer before the stream: the same error as POST /api/message (thrown, and as an error item)', async () => {
		const notFound = { detail: 'Conversation not found' };
		const streamed = await streamRun([{ json: notFound, statusCode: 404 }], {
			continueOnFail: true,
		});
		const unstreamed = await run({
			params: sendParams,
			answers: [{ statusCode: 404, body: notFound }],
			continueOnFail: true,
		});
		expect(streamed.chunks).toEqual([]);
		expect(streamed.output).toEqual([
			{
				json: {
					...unstreamed.output[0]?.json,
					description: 'The Chatbot Conversation API answered HTTP 404 (POST /api/message/stream).',
				},
				pairedItem: { item: 0 },
			},
		]);
		expect(streamed.output[0]?.json.error).toBe('Conversation not found');
		expect(streamed.output[0]?.json.httpCode).toBe('404');

		await server?.close();
		const rateLimited = {
			detail: {
				error: 'Rate limit exceeded',
				message: 'Too many requests',
				limit: 60,
				remaining: 0,
				reset: '2026-11-21T12:01:00Z',
				retry_after: 12,
			},
		};
		const error = await streamFailure([
			{ json: rateLimited, statusCode: 429, headers: { 'retry-after': '12' } },
		]);
		expect(error.message).toBe('Rate limit exceeded: retry after 12 seconds');
		expect(error.httpCode).toBe('429');
	});

	it('the whole endpoint URL as Stream URL (as the console shows it) works too', async () => {
		server = await startFakeStreamServer([{ events: messageEvents('m-1', ['Hi']), pieceSize: 9 }]);
		const { output, chunks } = await run({
			params: sendParams,
			answers: [],
			streaming: true,
			credentials: {
				baseUrl: BASE_URL,
				apiKey: API_KEY,
				streamUrl: `${server.url}/api/message/stream`,
			},
		});
		expect(server.requests[0]?.url).toBe('/api/message/stream');
		expect(textOf(chunks)).toBe('Hi');
		expect(output[0]?.json.content).toBe('Hi');
	});
});

describe('Message → Send does not stream otherwise', () => {
	const answer = ok({
		conversation_id: CONVERSATION,
		status: 'open',
		messages: [stored('m-1', 'Hallo')],
	});
	const cases: Array<[string, Partial<FakeSetup>]> = [
		['the run does not stream (isStreaming() is false)', { streaming: false }],
		['n8n has no isStreaming (older n8n)', {}],
		['the credential has no Stream URL', { streaming: true, streamUrl: '' } as Partial<FakeSetup>],
		['the node runs as an AI Agent tool', { streaming: true, toolExecution: true }],
	];
	for (const [when, setup] of cases) {
		it(`POSTs /api/message when ${when}`, async () => {
			const { streamUrl, ...rest } = setup as Partial<FakeSetup> & { streamUrl?: string };
			const { calls, chunks, output } = await run({
				params: sendParams,
				answers: [answer],
				credentials: {
					baseUrl: BASE_URL,
					apiKey: API_KEY,
					streamUrl: streamUrl ?? 'http://127.0.0.1:9/',
				},
				...rest,
			});
			expect(calls.map((call) => call.url)).toEqual(['https://api-v1.example.test/api/message']);
			expect(calls[0]?.options.encoding).toBeUndefined();
			expect(chunks).toEqual([]);
			expect(output[0]?.json.content).toBe('Hallo');
		});
	}
});

describe('the credential', () => {
	it('has an optional Stream URL that says where to find it, and keeps its test request', () => {
		const credential = new ChatbotConversationApi();
		const field = credential.properties.find((property) => property.name === 'streamUrl');
		expect(field?.displayName).toBe('Stream URL');
		expect(field?.required).toBeFalsy();
		expect(field?.default).toBe('');
		expect(field?.description).toContain('Settings → API');
		expect(field?.description).toContain('StreamUrl');
		expect(credential.test.request).toEqual({
			baseURL: '={{$credentials.baseUrl}}',
			url: '/api/me',
			method: 'GET',
		});
	});
});

describe('ServerSentEventParser', () => {
	const body =
		': keep-alive\n' +
		'event: message.delta\r\ndata: {"text":"Grüße €"}\r\n\r\n' +
		'event: message.delta\rdata: {"text":"zwei"}\r\r' +
		'data: one\ndata: two\n\n' +
		'event: empty\n\n' +
		'event: message.end\ndata:{"x":1}\n\n' +
		'event: cut\ndata: {"never":"finished"}\n';
	const expected = [
		{ event: 'message.delta', data: '{"text":"Grüße €"}' },
		{ event: 'message.delta', data: '{"text":"zwei"}' },
		{ event: 'message', data: 'one\ntwo' },
		{ event: 'message.end', data: '{"x":1}' },
	];

	it('parses LF, CRLF and CR lines, comments, multi-line data, and drops an unfinished event', () => {
		expect(new ServerSentEventParser().push(Buffer.from(body, 'utf8'))).toEqual(expected);
	});

	it('gives the same events however the bytes are split (every split point, mid-character too)', () => {
		const bytes = Buffer.from(body, 'utf8');
		for (let split = 1; split < bytes.length; split++) {
			const parser = new ServerSentEventParser();
			const events = [
				...parser.push(bytes.subarray(0, split)),
				...parser.push(bytes.subarray(split)),
			];
			expect(events, `split at byte ${split}`).toEqual(expected);
		}
		const parser = new ServerSentEventParser();
		const oneByOne = [...bytes].flatMap((byte) => parser.push(Uint8Array.of(byte)));
		expect(oneByOne).toEqual(expected);
	});
});
