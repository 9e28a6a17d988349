import type { IDataObject, IExecuteFunctions, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { managementRequest } from '../ChatbotConversationTrigger/ManagementApi';
import { apiRequest, IMAGE_MEDIA_TYPES, isDataObject } from './GenericFunctions';
import { STREAM_PATH, streamMessage, streamUrlFor } from './StreamedReply';

/** The API's page size ceiling for GET /api/conversation/{id}/messages. */
export const MAX_PAGE_SIZE = 100;

type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number];

interface AttachmentParameter {
	source?: string;
	url?: string;
	binaryPropertyName?: string;
}

function stringParameter(value: unknown): string {
	return typeof value === 'string'
		? value.trim()
		: value === undefined || value === null
			? ''
			: String(value);
}

function optionsParameter(context: IExecuteFunctions, itemIndex: number): IDataObject {
	const options: unknown = context.getNodeParameter('options', itemIndex, {});
	return isDataObject(options) ? options : {};
}

function toImageMediaType(mimeType: string | undefined): ImageMediaType | undefined {
	const base = (mimeType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
	const normalized = base === 'image/jpg' || base === 'image/pjpeg' ? 'image/jpeg' : base;
	return IMAGE_MEDIA_TYPES.find((type) => type === normalized);
}

/** Conversation → Start: POST /api/conversation → {conversation_id, contact_id} */
export async function startConversation(
	this: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject[]> {
	const chatbotId = stringParameter(this.getNodeParameter('chatbotId', itemIndex));
	const additional: unknown = this.getNodeParameter('additionalFields', itemIndex, {});
	const fields = isDataObject(additional) ? additional : {};

	const body: IDataObject = { chatbot_id: chatbotId };
	const optional: Array<[string, string]> = [
		['contactId', 'contact_id'],
		['externalId', 'external_id'],
		['userName', 'user_name'],
		['userEmail', 'user_email'],
		['userPhone', 'user_phone'],
	];
	for (const [parameter, field] of optional) {
		const value = stringParameter(fields[parameter]);
		if (value !== '') body[field] = value;
	}

	const response = await apiRequest.call(this, itemIndex, {
		method: 'POST',
		path: '/api/conversation',
		body,
		idempotencyKey: stringParameter(optionsParameter(this, itemIndex).idempotencyKey),
	});
	return [{ conversation_id: response.conversation_id, contact_id: response.contact_id }];
}

async function buildAttachments(
	context: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject[]> {
	const collection: unknown = context.getNodeParameter('attachments', itemIndex, {});
	const entries =
		isDataObject(collection) && Array.isArray(collection.image) ? collection.image : [];
	const attachments: IDataObject[] = [];

	for (const [position, entry] of entries.entries()) {
		const attachment: AttachmentParameter = isDataObject(entry) ? entry : {};
		const label = `Attachment ${position + 1}`;
		if ((attachment.source ?? 'url') === 'url') {
			const url = stringParameter(attachment.url);
			if (url === '') {
				throw new NodeOperationError(context.getNode(), `${label} has no image URL`, { itemIndex });
			}
			attachments.push({ type: 'image', url });
			continue;
		}

		const propertyName = stringParameter(attachment.binaryPropertyName) || 'data';
		const binary = context.helpers.assertBinaryData(itemIndex, propertyName);
		const mediaType = toImageMediaType(binary.mimeType);
		if (!mediaType) {
			throw new NodeOperationError(
				context.getNode(),
				`${label}: the binary field "${propertyName}" has MIME type "${binary.mimeType}", but only ${IMAGE_MEDIA_TYPES.join(', ')} can be sent`,
				{ itemIndex },
			);
		}
		const buffer = await context.helpers.getBinaryDataBuffer(itemIndex, propertyName);
		attachments.push({ type: 'image', data: buffer.toString('base64'), media_type: mediaType });
	}
	return attachments;
}

/**
 * Message → Send: POST /api/message → the chatbot's reply messages. When n8n streams the run to a
 * client and the credential has a Stream URL, the same turn over POST /api/message/stream, its
 * text forwarded as it is written; the output is the same.
 */
export async function sendMessage(
	this: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject[]> {
	const conversationId = stringParameter(this.getNodeParameter('conversationId', itemIndex));
	const text = this.getNodeParameter('text', itemIndex);
	const options = optionsParameter(this, itemIndex);
	const attachments = await buildAttachments(this, itemIndex);

	const body: IDataObject = {
		conversation_id: conversationId,
		message: typeof text === 'string' ? text : stringParameter(text),
	};
	if (attachments.length > 0) body.attachments = attachments;

	const idempotencyKey = stringParameter(options.idempotencyKey);
	const streamUrl = await streamUrlFor(this, itemIndex);
	const path = streamUrl ? STREAM_PATH : '/api/message';
	const response = streamUrl
		? await streamMessage.call(this, itemIndex, streamUrl, { body, idempotencyKey })
		: await apiRequest.call(this, itemIndex, { method: 'POST', path, body, idempotencyKey });

	const replyConversationId = response.conversation_id ?? conversationId;
	const messages = Array.isArray(response.messages) ? response.messages.filter(isDataObject) : [];
	if (messages.length === 0) {
		throw new NodeApiError(
			this.getNode(),
			{ body: response as JsonObject },
			{
				message: 'The chatbot sent no reply messages',
				description: `POST ${path} answered without any reply message.`,
				itemIndex,
			},
		);
	}

	if (options.output === 'single') {
		return [
			{
				conversation_id: replyConversationId,
				messages,
				reply: messages.map((message) => stringParameter(message.content)).join('\n\n'),
			},
		];
	}
	return messages.map((message) => ({
		conversation_id: replyConversationId,
		message_id: message.message_id,
		role: message.role,
		content: message.content,
		created_at: message.created_at,
	}));
}

/** Conversation → Get Messages: GET /api/conversation/{id}/messages, following next_cursor */
export async function getMessages(
	this: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject[]> {
	const conversationId = stringParameter(this.getNodeParameter('conversationId', itemIndex));
	const returnAll = this.getNodeParameter('returnAll', itemIndex, false) === true;
	const limit = returnAll ? Infinity : Number(this.getNodeParameter('limit', itemIndex, 50));
	if (!returnAll && (!Number.isInteger(limit) || limit < 1)) {
		throw new NodeOperationError(this.getNode(), 'Limit must be a whole number of at least 1', {
			itemIndex,
		});
	}

	const path = `/api/conversation/${encodeURIComponent(conversationId)}/messages`;
	const results: IDataObject[] = [];
	const seenCursors = new Set<string>();
	let cursor: string | undefined;

	while (results.length < limit) {
		const qs: IDataObject = { limit: Math.min(MAX_PAGE_SIZE, limit - results.length) };
		if (cursor !== undefined) qs.cursor = cursor;
		const page = await apiRequest.call(this, itemIndex, { method: 'GET', path, qs });

		const pageConversationId = page.conversation_id ?? conversationId;
		const messages = Array.isArray(page.messages) ? page.messages.filter(isDataObject) : [];
		for (const message of messages.slice(0, limit - results.length)) {
			results.push({ conversation_id: pageConversationId, ...message });
		}

		const next = typeof page.next_cursor === 'string' ? page.next_cursor : '';
		if (page.has_more !== true || next === '' || seenCursors.has(next) || messages.length === 0)
			break;
		seenCursors.add(next);
		cursor = next;
	}
	return results;
}

function conversationPath(context: IExecuteFunctions, itemIndex: number, suffix = ''): string {
	const conversationId = stringParameter(context.getNodeParameter('conversationId', itemIndex));
	if (conversationId === '') {
		throw new NodeOperationError(context.getNode(), 'Conversation ID is empty', { itemIndex });
	}
	return `/api/conversation/${encodeURIComponent(conversationId)}${suffix}`;
}

/** Conversation → Get: GET /api/conversation/{id} → the conversation */
export async function getConversation(
	this: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject[]> {
	return [
		await apiRequest.call(this, itemIndex, {
			method: 'GET',
			path: conversationPath(this, itemIndex),
		}),
	];
}

/**
 * Conversation → Get Many: GET /api/conversations with the filters given, most recent activity
 * first, following next_cursor; one item per conversation.
 */
export async function getManyConversations(
	this: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject[]> {
	const returnAll = this.getNodeParameter('returnAll', itemIndex, false) === true;
	const limit = returnAll ? Infinity : Number(this.getNodeParameter('limit', itemIndex, 50));
	if (!returnAll && (!Number.isInteger(limit) || limit < 1)) {
		throw new NodeOperationError(this.getNode(), 'Limit must be a whole number of at least 1', {
			itemIndex,
		});
	}
	const filtersParameter: unknown = this.getNodeParameter('filters', itemIndex, {});
	const filters = isDataObject(filtersParameter) ? filtersParameter : {};
	const query: IDataObject = {};
	for (const [parameter, field] of [
		['chatbotId', 'chatbot_id'],
		['contactId', 'contact_id'],
		['externalId', 'external_id'],
		['status', 'status'],
	] as const) {
		const value = stringParameter(filters[parameter]);
		if (value !== '') query[field] = value;
	}

	const results: IDataObject[] = [];
	const seenCursors = new Set<string>();
	let cursor: string | undefined;
	while (results.length < limit) {
		const qs: IDataObject = { ...query, limit: Math.min(MAX_PAGE_SIZE, limit - results.length) };
		if (cursor !== undefined) qs.cursor = cursor;
		const page = await apiRequest.call(this, itemIndex, {
			method: 'GET',
			path: '/api/conversations',
			qs,
		});
		const conversations = Array.isArray(page.conversations)
			? page.conversations.filter(isDataObject)
			: [];
		results.push(...conversations.slice(0, limit - results.length));
		const next = typeof page.next_cursor === 'string' ? page.next_cursor : '';
		if (
			page.has_more !== true ||
			next === '' ||
			seenCursors.has(next) ||
			conversations.length === 0
		)
			break;
		seenCursors.add(next);
		cursor = next;
	}
	return results;
}

/** Conversation → Hand Off: POST /api/conversation/{id}/handoff {reason?} → the conversation */
export async function handOffConversation(
	this: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject[]> {
	const reason = stringParameter(this.getNodeParameter('reason', itemIndex, ''));
	return [
		await apiRequest.call(this, itemIndex, {
			method: 'POST',
			path: conversationPath(this, itemIndex, '/handoff'),
			body: reason === '' ? {} : { reason },
		}),
	];
}

/** Conversation → Rate: POST /api/conversation/{id}/rating {score, comment?} → the rating */
export async function rateConversation(
	this: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject[]> {
	const score = Number(this.getNodeParameter('score', itemIndex));
	if (!Number.isInteger(score) || score < 1 || score > 5) {
		throw new NodeOperationError(this.getNode(), 'Score must be a whole number from 1 to 5', {
			itemIndex,
		});
	}
	const comment = stringParameter(this.getNodeParameter('ratingComment', itemIndex, ''));
	return [
		await apiRequest.call(this, itemIndex, {
			method: 'POST',
			path: conversationPath(this, itemIndex, '/rating'),
			body: comment === '' ? { score } : { score, comment },
		}),
	];
}

/** Message → Give Feedback: POST /api/message/{id}/feedback {rating, comment?} → the feedback */
export async function giveFeedback(
	this: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject[]> {
	const messageId = stringParameter(this.getNodeParameter('messageId', itemIndex));
	if (messageId === '') {
		throw new NodeOperationError(this.getNode(), 'Message ID is empty', { itemIndex });
	}
	const rating = stringParameter(this.getNodeParameter('rating', itemIndex));
	const comment = stringParameter(this.getNodeParameter('feedbackComment', itemIndex, ''));
	return [
		await apiRequest.call(this, itemIndex, {
			method: 'POST',
			path: `/api/message/${encodeURIComponent(messageId)}/feedback`,
			body: comment === '' ? { rating } : { rating, comment },
		}),
	];
}

/** Conversation → Close: POST /api/conversation/{id}/close → the conversation */
export async function closeConversation(
	this: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject[]> {
	return [
		await apiRequest.call(this, itemIndex, {
			method: 'POST',
			path: conversationPath(this, itemIndex, '/close'),
			body: {},
		}),
	];
}

/**
 * Conversation → Reply as Person: POST /manage/conversations/{id}/reply {message, display_name?},
 * a management route, with the credential of scope manage. The visitor sees it as a person's
 * message; an open conversation is taken over first (the chatbot stops answering). Output: the
 * message (role agent) with the conversation's id and status.
 */
export async function replyAsPerson(
	this: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject[]> {
	const conversationId = stringParameter(this.getNodeParameter('conversationId', itemIndex));
	if (conversationId === '') {
		throw new NodeOperationError(this.getNode(), 'Conversation ID is empty', { itemIndex });
	}
	const text = this.getNodeParameter('replyText', itemIndex);
	const message = typeof text === 'string' ? text : stringParameter(text);
	if (message.trim() === '') {
		throw new NodeOperationError(this.getNode(), 'The reply has no text', { itemIndex });
	}
	const displayName = stringParameter(this.getNodeParameter('displayName', itemIndex, ''));
	const answer = await managementRequest.call(
		this,
		'POST',
		`/manage/conversations/${encodeURIComponent(conversationId)}/reply`,
		{
			body: { message, ...(displayName === '' ? {} : { display_name: displayName }) },
			itemIndex,
			purpose: 'reply',
		},
	);
	const conversation = isDataObject(answer.body?.conversation) ? answer.body.conversation : {};
	const reply = isDataObject(answer.body?.message) ? answer.body.message : {};
	return [
		{
			conversation_id: conversation.conversation_id ?? conversationId,
			status: conversation.status,
			...reply,
		},
	];
}
