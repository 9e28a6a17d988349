import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import { describe, expect, it } from 'vitest';

import { API_KEY, MANAGE_KEY, ok, run } from './fake-context.mts';

const CHATBOT = '11111111-1111-4111-8111-111111111111';
const CONVERSATION = '22222222-2222-4222-8222-222222222222';
const CONTACT = '33333333-3333-4333-8333-333333333333';

const reply = (id: string, content: string) => ({
	message_id: id,
	role: 'assistant',
	content,
	created_at: '2026-11-21T10:00:00.000Z',
});

describe('Conversation → Start', () => {
	it('POSTs /api/conversation with a Bearer key and outputs conversation_id and contact_id', async () => {
		const { output, calls } = await run({
			params: { resource: 'conversation', operation: 'start', chatbotId: ` ${CHATBOT} ` },
			answers: [ok({ conversation_id: CONVERSATION, contact_id: CONTACT })],
		});

		expect(calls).toHaveLength(1);
		const [call] = calls;
		expect(call?.credentialType).toBe('chatbotConversationApi');
		expect(call?.method).toBe('POST');
		// the trailing slash of the credential's base URL is not doubled
		expect(call?.url).toBe('https://api-v1.example.test/api/conversation');
		expect(call?.headers.Authorization).toBe(`Bearer ${API_KEY}`);
		expect(call?.headers['Idempotency-Key']).toBeUndefined();
		expect(call?.body).toEqual({ chatbot_id: CHATBOT });
		expect(call?.options.json).toBe(true);
		expect(output).toEqual([
			{ json: { conversation_id: CONVERSATION, contact_id: CONTACT }, pairedItem: { item: 0 } },
		]);
	});

	it('sends every optional contact field that is filled in, and the Idempotency-Key header', async () => {
		const { calls } = await run({
			params: {
				resource: 'conversation',
				operation: 'start',
				chatbotId: CHATBOT,
				additionalFields: {
					contactId: CONTACT,
					externalId: 'crm-42',
					userName: 'Ada Lovelace',
					userEmail: 'ada@example.com',
					userPhone: '+44 20 7946 0000',
				},
				options: { idempotencyKey: 'start-crm-42' },
			},
			answers: [ok({ conversation_id: CONVERSATION, contact_id: CONTACT })],
		});

		expect(calls[0]?.body).toEqual({
			chatbot_id: CHATBOT,
			contact_id: CONTACT,
			external_id: 'crm-42',
			user_name: 'Ada Lovelace',
			user_email: 'ada@example.com',
			user_phone: '+44 20 7946 0000',
		});
		expect(calls[0]?.headers['Idempotency-Key']).toBe('start-crm-42');
	});

	it('leaves out optional fields that are empty', async () => {
		const { calls } = await run({
			params: {
				resource: 'conversation',
				operation: 'start',
				chatbotId: CHATBOT,
				additionalFields: { userName: '', userEmail: '  ', externalId: 'x-1' },
			},
			answers: [ok({ conversation_id: CONVERSATION, contact_id: CONTACT })],
		});
		expect(calls[0]?.body).toEqual({ chatbot_id: CHATBOT, external_id: 'x-1' });
	});

	it('runs once per input item, each output paired with its item (expressions per item)', async () => {
		const { output, calls } = await run({
			items: [{ json: { bot: 'a' } }, { json: { bot: 'b' } }],
			params: (itemIndex) => ({
				resource: 'conversation',
				operation: 'start',
				chatbotId: itemIndex === 0 ? 'bot-a' : 'bot-b',
			}),
			answers: [
				ok({ conversation_id: 'c-a', contact_id: 'p-a' }),
				ok({ conversation_id: 'c-b', contact_id: 'p-b' }),
			],
		});
		expect(calls.map((call) => call.body)).toEqual([
			{ chatbot_id: 'bot-a' },
			{ chatbot_id: 'bot-b' },
		]);
		expect(output).toEqual([
			{ json: { conversation_id: 'c-a', contact_id: 'p-a' }, pairedItem: { item: 0 } },
			{ json: { conversation_id: 'c-b', contact_id: 'p-b' }, pairedItem: { item: 1 } },
		]);
	});
});

describe('Message → Send', () => {
	const sendParams = {
		resource: 'message',
		operation: 'send',
		conversationId: CONVERSATION,
		text: 'Hello!',
	};

	it('POSTs /api/message and outputs one item per reply message', async () => {
		const { output, calls } = await run({
			params: sendParams,
			answers: [
				ok({
					conversation_id: CONVERSATION,
					messages: [reply('m-1', 'Hi, how can I help?'), reply('m-2', 'Ask me anything.')],
				}),
			],
		});

		expect(calls[0]?.method).toBe('POST');
		expect(calls[0]?.url).toBe('https://api-v1.example.test/api/message');
		expect(calls[0]?.headers.Authorization).toBe(`Bearer ${API_KEY}`);
		expect(calls[0]?.body).toEqual({ conversation_id: CONVERSATION, message: 'Hello!' });
		expect(output).toEqual([
			{
				json: { conversation_id: CONVERSATION, ...reply('m-1', 'Hi, how can I help?') },
				pairedItem: { item: 0 },
			},
			{
				json: { conversation_id: CONVERSATION, ...reply('m-2', 'Ask me anything.') },
				pairedItem: { item: 0 },
			},
		]);
	});

	it('outputs a single item with the messages and the joined reply text when asked to', async () => {
		const messages = [reply('m-1', 'First.'), reply('m-2', 'Second.')];
		const { output } = await run({
			params: { ...sendParams, options: { output: 'single' } },
			answers: [ok({ conversation_id: CONVERSATION, messages })],
		});
		expect(output).toEqual([
			{
				json: { conversation_id: CONVERSATION, messages, reply: 'First.\n\nSecond.' },
				pairedItem: { item: 0 },
			},
		]);
	});

	it('sends image attachments given by URL and the Idempotency-Key header', async () => {
		const { calls } = await run({
			params: {
				...sendParams,
				attachments: {
					image: [
						{ source: 'url', url: 'https://example.com/a.png' },
						{ source: 'url', url: ' https://example.com/b.jpg ' },
					],
				},
				options: { idempotencyKey: 'msg-1' },
			},
			answers: [ok({ conversation_id: CONVERSATION, messages: [reply('m-1', 'Nice pictures')] })],
		});
		expect(calls[0]?.body).toEqual({
			conversation_id: CONVERSATION,
			message: 'Hello!',
			attachments: [
				{ type: 'image', url: 'https://example.com/a.png' },
				{ type: 'image', url: 'https://example.com/b.jpg' },
			],
		});
		expect(calls[0]?.headers['Idempotency-Key']).toBe('msg-1');
	});

	it("sends an image from the item's binary data as base64 data with its media type", async () => {
		const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
		const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 9, 8, 7]);
		const { calls, output } = await run({
			items: [
				{
					json: {},
					binary: {
						data: { data: png.toString('base64'), mimeType: 'image/png', fileName: 'a.png' },
						photo: { data: jpeg.toString('base64'), mimeType: 'image/jpg', fileName: 'b.jpg' },
					},
				},
			],
			params: {
				...sendParams,
				attachments: {
					image: [
						{ source: 'binary', binaryPropertyName: 'data' },
						{ source: 'binary', binaryPropertyName: 'photo' },
						{ source: 'url', url: 'https://example.com/c.webp' },
					],
				},
			},
			answers: [ok({ conversation_id: CONVERSATION, messages: [reply('m-1', 'Got them')] })],
		});
		expect(calls[0]?.body).toEqual({
			conversation_id: CONVERSATION,
			message: 'Hello!',
			attachments: [
				{ type: 'image', data: png.toString('base64'), media_type: 'image/png' },
				{ type: 'image', data: jpeg.toString('base64'), media_type: 'image/jpeg' },
				{ type: 'image', url: 'https://example.com/c.webp' },
			],
		});
		expect(output).toHaveLength(1);
	});

	it('refuses binary data that is not a supported image type, before calling the API', async () => {
		const promise = run({
			items: [{ json: {}, binary: { data: { data: 'JVBERi0=', mimeType: 'application/pdf' } } }],
			params: {
				...sendParams,
				attachments: { image: [{ source: 'binary', binaryPropertyName: 'data' }] },
			},
			answers: [],
		});
		await expect(promise).rejects.toBeInstanceOf(NodeOperationError);
		await expect(promise).rejects.toThrow(
			/application\/pdf.*image\/png, image\/jpeg, image\/gif, image\/webp/,
		);
	});

	it('fails on a missing binary field and on an empty image URL', async () => {
		await expect(
			run({
				params: {
					...sendParams,
					attachments: { image: [{ source: 'binary', binaryPropertyName: 'nope' }] },
				},
				answers: [],
			}),
		).rejects.toThrow(/binary file 'nope'/);
		await expect(
			run({
				params: { ...sendParams, attachments: { image: [{ source: 'url', url: '' }] } },
				answers: [],
			}),
		).rejects.toThrow('Attachment 1 has no image URL');
	});

	it('treats an answer without reply messages as an API error', async () => {
		await expect(
			run({ params: sendParams, answers: [ok({ conversation_id: CONVERSATION, messages: [] })] }),
		).rejects.toBeInstanceOf(NodeApiError);
	});
});

describe('Conversation → Get Messages', () => {
	const getParams = {
		resource: 'conversation',
		operation: 'getMessages',
		conversationId: CONVERSATION,
	};
	const stored = (n: number) => ({
		message_id: `m-${n}`,
		role: n % 2 === 0 ? 'assistant' : 'user',
		content: `message ${n}`,
		attachments: [],
		created_at: '2026-11-21T10:00:00.000Z',
	});

	it('GETs one page with the limit and outputs one item per message', async () => {
		const { output, calls } = await run({
			params: { ...getParams, returnAll: false, limit: 2 },
			answers: [
				ok({
					conversation_id: CONVERSATION,
					messages: [stored(1), stored(2)],
					has_more: true,
					next_cursor: 'c2',
				}),
			],
		});
		expect(calls).toHaveLength(1);
		expect(calls[0]?.method).toBe('GET');
		expect(calls[0]?.url).toBe(
			`https://api-v1.example.test/api/conversation/${CONVERSATION}/messages`,
		);
		expect(calls[0]?.qs).toEqual({ limit: 2 });
		expect(calls[0]?.headers.Authorization).toBe(`Bearer ${API_KEY}`);
		expect(calls[0]?.body).toBeUndefined();
		expect(output).toEqual([
			{ json: { conversation_id: CONVERSATION, ...stored(1) }, pairedItem: { item: 0 } },
			{ json: { conversation_id: CONVERSATION, ...stored(2) }, pairedItem: { item: 0 } },
		]);
	});

	it('with Return All follows next_cursor until has_more is false', async () => {
		const { output, calls } = await run({
			params: { ...getParams, returnAll: true },
			answers: [
				ok({
					conversation_id: CONVERSATION,
					messages: [stored(1), stored(2)],
					has_more: true,
					next_cursor: 'cur-2',
				}),
				ok({
					conversation_id: CONVERSATION,
					messages: [stored(3), stored(4)],
					has_more: true,
					next_cursor: 'cur-3',
				}),
				ok({
					conversation_id: CONVERSATION,
					messages: [stored(5)],
					has_more: false,
					next_cursor: null,
				}),
			],
		});
		expect(calls.map((call) => call.qs)).toEqual([
			{ limit: 100 },
			{ limit: 100, cursor: 'cur-2' },
			{ limit: 100, cursor: 'cur-3' },
		]);
		expect(output.map((item) => item.json.message_id)).toEqual(['m-1', 'm-2', 'm-3', 'm-4', 'm-5']);
		expect(output.every((item) => JSON.stringify(item.pairedItem) === '{"item":0}')).toBe(true);
	});

	it('pages a limit above 100 and stops at the limit', async () => {
		const page = (from: number, count: number) =>
			Array.from({ length: count }, (_, i) => stored(from + i));
		const { output, calls } = await run({
			params: { ...getParams, returnAll: false, limit: 150 },
			answers: [
				ok({
					conversation_id: CONVERSATION,
					messages: page(1, 100),
					has_more: true,
					next_cursor: 'p2',
				}),
				ok({
					conversation_id: CONVERSATION,
					messages: page(101, 50),
					has_more: true,
					next_cursor: 'p3',
				}),
			],
		});
		expect(calls.map((call) => call.qs)).toEqual([{ limit: 100 }, { limit: 50, cursor: 'p2' }]);
		expect(output).toHaveLength(150);
	});

	it('stops when the API repeats a cursor instead of looping forever', async () => {
		const { calls } = await run({
			params: { ...getParams, returnAll: true },
			answers: [
				ok({
					conversation_id: CONVERSATION,
					messages: [stored(1)],
					has_more: true,
					next_cursor: 'same',
				}),
				ok({
					conversation_id: CONVERSATION,
					messages: [stored(2)],
					has_more: true,
					next_cursor: 'same',
				}),
			],
		});
		expect(calls).toHaveLength(2);
	});

	it('URL-encodes the conversation id into the path', async () => {
		const { calls } = await run({
			params: { ...getParams, conversationId: 'a/b?c', returnAll: false, limit: 5 },
			answers: [ok({ conversation_id: 'a/b?c', messages: [], has_more: false, next_cursor: null })],
		});
		expect(calls[0]?.url).toBe('https://api-v1.example.test/api/conversation/a%2Fb%3Fc/messages');
	});
});

const conversation = (status: string) => ({
	conversation_id: CONVERSATION,
	chatbot_id: CHATBOT,
	contact_id: CONTACT,
	external_id: 'crm-42',
	status,
	created_at: '2026-11-21T10:00:00.000Z',
	last_message_at: '2026-11-21T10:01:00.000Z',
	message_count: 2,
});

describe('Conversation → Get, Hand Off and Close', () => {
	it('GETs /api/conversation/{id} and outputs the conversation', async () => {
		const { output, calls } = await run({
			params: { resource: 'conversation', operation: 'get', conversationId: ` ${CONVERSATION} ` },
			answers: [ok(conversation('open'))],
		});
		expect(calls.map((call) => [call.credentialType, call.method, call.url])).toEqual([
			[
				'chatbotConversationApi',
				'GET',
				`https://api-v1.example.test/api/conversation/${CONVERSATION}`,
			],
		]);
		expect(calls[0]?.headers.Authorization).toBe(`Bearer ${API_KEY}`);
		expect(output).toEqual([{ json: conversation('open'), pairedItem: { item: 0 } }]);
	});

	it('POSTs the handoff with its reason, or an empty body without one', async () => {
		const { output, calls } = await run({
			items: [{ json: {} }, { json: {} }],
			params: (itemIndex) => ({
				resource: 'conversation',
				operation: 'handOff',
				conversationId: CONVERSATION,
				reason: itemIndex === 0 ? 'Wants a refund' : '  ',
			}),
			answers: [ok(conversation('handoff')), ok(conversation('handoff'))],
		});
		expect(calls.map((call) => [call.method, call.url, call.body])).toEqual([
			[
				'POST',
				`https://api-v1.example.test/api/conversation/${CONVERSATION}/handoff`,
				{ reason: 'Wants a refund' },
			],
			['POST', `https://api-v1.example.test/api/conversation/${CONVERSATION}/handoff`, {}],
		]);
		expect(output.map((item) => [item.json.status, item.pairedItem])).toEqual([
			['handoff', { item: 0 }],
			['handoff', { item: 1 }],
		]);
	});

	it('POSTs the close and outputs the closed conversation', async () => {
		const { output, calls } = await run({
			params: { resource: 'conversation', operation: 'close', conversationId: CONVERSATION },
			answers: [ok(conversation('closed'))],
		});
		expect([calls[0]?.method, calls[0]?.url]).toEqual([
			'POST',
			`https://api-v1.example.test/api/conversation/${CONVERSATION}/close`,
		]);
		expect(output[0]?.json.status).toBe('closed');
	});

	it("gives the API's 409 for a closed conversation as the error (continue on fail: an error item)", async () => {
		const { output } = await run({
			params: { resource: 'conversation', operation: 'handOff', conversationId: CONVERSATION },
			continueOnFail: true,
			answers: [{ statusCode: 409, body: { detail: 'Conversation is closed' } }],
		});
		expect(output[0]?.json).toMatchObject({ error: 'Conversation is closed', httpCode: '409' });
	});

	it('refuses an empty conversation id before calling the API', async () => {
		await expect(
			run({
				params: { resource: 'conversation', operation: 'close', conversationId: ' ' },
				answers: [],
			}),
		).rejects.toThrow(NodeOperationError);
	});
});

describe('Conversation → Get Many', () => {
	const page = (ids: string[], next: string | null) => ({
		conversations: ids.map((id) => ({ ...conversation('handoff'), conversation_id: id })),
		has_more: next !== null,
		next_cursor: next,
	});

	it('GETs /api/conversations with the filters given and the limit, one item per conversation', async () => {
		const { output, calls } = await run({
			params: {
				resource: 'conversation',
				operation: 'getAll',
				returnAll: false,
				limit: 2,
				filters: { chatbotId: CHATBOT, status: 'handoff', externalId: '', contactId: ' ' },
			},
			answers: [ok(page(['c-1', 'c-2'], 'next-page'))],
		});
		expect(calls).toHaveLength(1);
		expect(calls[0]?.url).toBe('https://api-v1.example.test/api/conversations');
		expect(calls[0]?.qs).toEqual({ chatbot_id: CHATBOT, status: 'handoff', limit: 2 });
		expect(output.map((item) => item.json.conversation_id)).toEqual(['c-1', 'c-2']);
	});

	it('with Return All follows next_cursor until has_more is false', async () => {
		const { output, calls } = await run({
			params: { resource: 'conversation', operation: 'getAll', returnAll: true, filters: {} },
			answers: [ok(page(['c-1'], 'cursor-2')), ok(page(['c-2'], null))],
		});
		expect(calls.map((call) => call.qs)).toEqual([
			{ limit: 100 },
			{ limit: 100, cursor: 'cursor-2' },
		]);
		expect(output.map((item) => item.json.conversation_id)).toEqual(['c-1', 'c-2']);
	});
});

describe('Conversation → Reply as Person', () => {
	const answered = {
		conversation: conversation('handoff'),
		message: {
			message_id: 'm-9',
			role: 'agent',
			content: 'A colleague here: your refund is on its way.',
			agent_name: 'Ada from Support',
			created_at: '2026-11-21T10:02:00.000Z',
		},
	};

	it('POSTs the management route with the management credential (scope manage) and outputs the reply', async () => {
		const { output, calls } = await run({
			params: {
				resource: 'conversation',
				operation: 'replyAsPerson',
				conversationId: CONVERSATION,
				replyText: 'A colleague here: your refund is on its way.',
				displayName: 'Ada from Support',
			},
			answers: [ok(answered)],
		});
		expect(calls.map((call) => [call.credentialType, call.method, call.url, call.body])).toEqual([
			[
				'chatbotConversationManageApi',
				'POST',
				`https://api-v1.example.test/manage/conversations/${CONVERSATION}/reply`,
				{
					message: 'A colleague here: your refund is on its way.',
					display_name: 'Ada from Support',
				},
			],
		]);
		expect(calls[0]?.headers.Authorization).toBe(`Bearer ${MANAGE_KEY}`);
		expect(output).toEqual([
			{
				json: { conversation_id: CONVERSATION, status: 'handoff', ...answered.message },
				pairedItem: { item: 0 },
			},
		]);
	});

	it('leaves the display name out when empty (the API names a key\'s replies "Support team")', async () => {
		const { calls } = await run({
			params: {
				resource: 'conversation',
				operation: 'replyAsPerson',
				conversationId: CONVERSATION,
				replyText: 'Hello',
			},
			answers: [ok(answered)],
		});
		expect(calls[0]?.body).toEqual({ message: 'Hello' });
	});

	it('names the scope it needs when the key is of scope chat (403 forbidden)', async () => {
		const failure = await run({
			params: {
				resource: 'conversation',
				operation: 'replyAsPerson',
				conversationId: CONVERSATION,
				replyText: 'Hello',
			},
			answers: [
				{
					statusCode: 403,
					body: { error: { code: 'forbidden', message: 'Your key may not do this', details: {} } },
				},
			],
		}).catch((error: unknown) => error);
		expect(failure).toBeInstanceOf(NodeApiError);
		expect((failure as NodeApiError).message).toBe(
			'The API key may not reply as a person: Reply as Person needs a key of scope "manage"',
		);
		expect((failure as NodeApiError).httpCode).toBe('403');
	});

	it('refuses a reply without text before calling the API', async () => {
		await expect(
			run({
				params: {
					resource: 'conversation',
					operation: 'replyAsPerson',
					conversationId: CONVERSATION,
					replyText: '  ',
				},
				answers: [],
			}),
		).rejects.toThrow(NodeOperationError);
	});
});

describe('Message → Give Feedback and Conversation → Rate', () => {
	const MESSAGE = '44444444-4444-4444-8444-444444444444';

	it('POSTs the thumb on a reply, with the comment only when one is given', async () => {
		const feedback = (rating: string, comment: string | null) => ({
			message_id: MESSAGE,
			conversation_id: CONVERSATION,
			rating,
			comment,
			given_at: '2026-11-21T10:00:00.000Z',
		});
		const { output, calls } = await run({
			items: [{ json: {} }, { json: {} }],
			params: (itemIndex) => ({
				resource: 'message',
				operation: 'giveFeedback',
				messageId: ` ${MESSAGE} `,
				rating: itemIndex === 0 ? 'down' : 'up',
				feedbackComment: itemIndex === 0 ? 'Wrong parcel' : ' ',
			}),
			answers: [ok(feedback('down', 'Wrong parcel')), ok(feedback('up', null))],
		});
		expect(calls.map((call) => [call.method, call.url, call.body])).toEqual([
			[
				'POST',
				`https://api-v1.example.test/api/message/${MESSAGE}/feedback`,
				{ rating: 'down', comment: 'Wrong parcel' },
			],
			['POST', `https://api-v1.example.test/api/message/${MESSAGE}/feedback`, { rating: 'up' }],
		]);
		expect(output.map((item) => [item.json.rating, item.pairedItem])).toEqual([
			['down', { item: 0 }],
			['up', { item: 1 }],
		]);
	});

	it('refuses an empty message id before calling the API', async () => {
		await expect(
			run({
				params: { resource: 'message', operation: 'giveFeedback', messageId: ' ', rating: 'up' },
				answers: [],
			}),
		).rejects.toThrow(NodeOperationError);
	});

	it('POSTs a 1–5 rating of the conversation, and refuses a score out of range before calling the API', async () => {
		const { output, calls } = await run({
			params: {
				resource: 'conversation',
				operation: 'rate',
				conversationId: CONVERSATION,
				score: 4,
				ratingComment: 'Quick answers',
			},
			answers: [
				ok({
					conversation_id: CONVERSATION,
					score: 4,
					comment: 'Quick answers',
					rated_at: '2026-11-21T10:00:00.000Z',
				}),
			],
		});
		expect(calls.map((call) => [call.method, call.url, call.body])).toEqual([
			[
				'POST',
				`https://api-v1.example.test/api/conversation/${CONVERSATION}/rating`,
				{ score: 4, comment: 'Quick answers' },
			],
		]);
		expect(output[0]?.json).toMatchObject({ score: 4 });
		for (const score of [0, 6, 4.5]) {
			await expect(
				run({
					params: {
						resource: 'conversation',
						operation: 'rate',
						conversationId: CONVERSATION,
						score,
					},
					answers: [],
				}),
			).rejects.toThrow(NodeOperationError);
		}
	});
});
