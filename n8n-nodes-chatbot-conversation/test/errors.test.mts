import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import { describe, expect, it } from 'vitest';

import { describeApiError } from '../nodes/ChatbotConversation/GenericFunctions.ts';
import { type FakeAnswer, ok, run } from './fake-context.mts';

const CONVERSATION = '22222222-2222-4222-8222-222222222222';
const sendParams = {
	resource: 'message',
	operation: 'send',
	conversationId: CONVERSATION,
	text: 'Hi',
};

async function failure(answer: FakeAnswer): Promise<NodeApiError> {
	try {
		await run({ params: sendParams, answers: [answer] });
	} catch (error) {
		expect(error).toBeInstanceOf(NodeApiError);
		return error as NodeApiError;
	}
	throw new Error('execute() did not fail');
}

describe('API errors surface as NodeApiError carrying the API detail', () => {
	it('401 Invalid API key', async () => {
		const error = await failure({
			statusCode: 401,
			body: { detail: 'Invalid API key' },
			headers: { 'www-authenticate': 'Bearer' },
		});
		expect(error.message).toBe('Invalid API key');
		expect(error.httpCode).toBe('401');
		expect(error.description).toContain('HTTP 401');
		expect(error.description).toContain('Check the API key');
		expect(error.context.itemIndex).toBe(0);
	});

	it('404 Conversation not found', async () => {
		const error = await failure({ statusCode: 404, body: { detail: 'Conversation not found' } });
		expect(error.message).toBe('Conversation not found');
		expect(error.httpCode).toBe('404');
		expect(error.description).toContain('POST /api/message');
	});

	it('422 validation list: every item readable as location: message', async () => {
		const error = await failure({
			statusCode: 422,
			body: {
				detail: [
					{
						type: 'literal_error',
						loc: ['body', 'attachments', 0, 'type'],
						msg: "Input should be 'image'",
						input: 'video',
					},
					{ type: 'missing', loc: ['body', 'message'], msg: 'Field required', input: {} },
				],
			},
		});
		expect(error.message).toBe(
			"Validation failed: body.attachments.0.type: Input should be 'image'; body.message: Field required",
		);
		expect(error.httpCode).toBe('422');
		expect(error.description).toContain(
			"body.attachments.0.type: Input should be 'image' (literal_error)",
		);
		expect(error.description).toContain('body.message: Field required (missing)');
	});

	it('429 names retry_after from the body', async () => {
		const error = await failure({
			statusCode: 429,
			headers: { 'retry-after': '12' },
			body: {
				detail: {
					error: 'Rate limit exceeded',
					message: 'Too many requests for this API key.',
					limit: 100,
					remaining: 0,
					reset: '2026-11-21T10:01:00Z',
					retry_after: 12,
				},
			},
		});
		expect(error.message).toBe('Rate limit exceeded: retry after 12 seconds');
		expect(error.httpCode).toBe('429');
		expect(error.description).toContain('Too many requests for this API key.');
		expect(error.description).toContain('Limit: 100 requests per minute.');
		expect(error.description).toContain('2026-11-21T10:01:00Z');
	});

	it('429 falls back to the Retry-After header', () => {
		const text = describeApiError(
			429,
			{ detail: { error: 'Rate limit exceeded' } },
			{ 'Retry-After': '7' },
		);
		expect(text.message).toBe('Rate limit exceeded: retry after 7 seconds');
	});

	it('a non-JSON error body still gives the status and the start of the body', async () => {
		const error = await failure({ statusCode: 502, body: '<html>Bad gateway</html>' });
		expect(error.message).toBe('Request failed with HTTP 502');
		expect(error.description).toContain('<html>Bad gateway</html>');
	});

	it('a network failure becomes a NodeApiError too', async () => {
		const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), {
			code: 'ECONNREFUSED',
		});
		const error = await failure({ networkError: refused });
		expect(error.message).toMatch(/refused the connection/);
	});
});

describe('continue on fail', () => {
	it('turns a failing item into an error item, keeps going, and pairs every output', async () => {
		const { output, calls } = await run({
			continueOnFail: true,
			items: [{ json: { n: 0 } }, { json: { n: 1 } }],
			params: (itemIndex) => ({
				...sendParams,
				conversationId: itemIndex === 0 ? 'unknown' : CONVERSATION,
			}),
			answers: [
				{ statusCode: 404, body: { detail: 'Conversation not found' } },
				ok({
					conversation_id: CONVERSATION,
					messages: [{ message_id: 'm-1', role: 'assistant', content: 'Hello', created_at: 'now' }],
				}),
			],
		});
		expect(calls).toHaveLength(2);
		expect(output).toHaveLength(2);
		expect(output[0]).toEqual({
			json: {
				error: 'Conversation not found',
				description: 'The Chatbot Conversation API answered HTTP 404 (POST /api/message).',
				httpCode: '404',
			},
			pairedItem: { item: 0 },
		});
		expect(output[1]?.json.content).toBe('Hello');
		expect(output[1]?.pairedItem).toEqual({ item: 1 });
	});

	it('also covers errors raised before the request (bad binary input)', async () => {
		const { output, calls } = await run({
			continueOnFail: true,
			params: {
				...sendParams,
				attachments: { image: [{ source: 'binary', binaryPropertyName: 'data' }] },
			},
			answers: [],
		});
		expect(calls).toHaveLength(0);
		expect(output[0]?.json.error).toMatch(/binary file 'data'/);
		expect(output[0]?.pairedItem).toEqual({ item: 0 });
	});

	it('without continue on fail the first error stops the node', async () => {
		await expect(
			run({
				items: [{ json: {} }, { json: {} }],
				params: sendParams,
				answers: [{ statusCode: 404, body: { detail: 'Conversation not found' } }],
			}),
		).rejects.toThrow('Conversation not found');
	});

	it('an unknown operation is a NodeOperationError', async () => {
		await expect(
			run({ params: { resource: 'message', operation: 'delete' }, answers: [] }),
		).rejects.toBeInstanceOf(NodeOperationError);
	});
});
