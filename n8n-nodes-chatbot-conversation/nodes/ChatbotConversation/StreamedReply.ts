import type { IDataObject, IExecuteFunctions, IHttpRequestOptions } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import {
	type ApiRequest,
	apiErrorFor,
	CREDENTIAL_TYPE,
	isDataObject,
	sendWithCredential,
	withoutTrailingSlash,
} from './GenericFunctions';
import { type ServerSentEvent, ServerSentEventParser } from './ServerSentEvents';

export const STREAM_PATH = '/api/message/stream';

/** Sent between two reply messages of one turn, as the Single Item output's `reply` joins them. */
export const MESSAGE_SEPARATOR = '\n\n';

/**
 * Sent when the API voids the text of a message it was streaming (an `error` event) and its
 * fallback reply follows: what n8n already passed on cannot be taken back, so the broken-off text
 * is marked as such and the fallback starts a paragraph of its own.
 */
export const BROKEN_OFF_SEPARATOR = ' …\n\n';

/**
 * The Stream URL to use for this item, or '' to send the message without streaming: only when
 * n8n streams this run to a client (a Webhook or Chat Trigger set to stream), the node does not
 * run as an AI Agent's tool (its reply is the agent's to use, not the client's to read) and the
 * credential has a Stream URL. `isStreaming` is missing on n8n versions before streaming.
 */
export async function streamUrlFor(context: IExecuteFunctions, itemIndex: number): Promise<string> {
	const streaming = typeof context.isStreaming === 'function' && context.isStreaming() === true;
	if (!streaming) return '';
	if (typeof context.isToolExecution === 'function' && context.isToolExecution()) return '';
	const credentials = await context.getCredentials(CREDENTIAL_TYPE, itemIndex);
	// The console shows the whole endpoint; accept it as well as its base URL.
	const url = withoutTrailingSlash(credentials.streamUrl);
	return url.endsWith(STREAM_PATH) ? url.slice(0, -STREAM_PATH.length) : url;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<Uint8Array | string> {
	return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

async function readAll(body: unknown): Promise<string> {
	if (typeof body === 'string') return body;
	if (!isAsyncIterable(body))
		return body === undefined || body === null ? '' : JSON.stringify(body);
	const decoder = new TextDecoder('utf-8');
	let text = '';
	for await (const piece of body) {
		text += typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
	}
	return text + decoder.decode();
}

function parseJson(text: string): unknown {
	try {
		return JSON.parse(text) as unknown;
	} catch {
		return text;
	}
}

function headerText(headers: IDataObject, name: string): string {
	const value = headers[name] ?? headers[name.toLowerCase()];
	return typeof value === 'string' ? value : '';
}

/**
 * Message → Send over POST {Stream URL}/api/message/stream: forwards the reply's text to n8n's
 * streaming response as it arrives (`sendChunk`: begin, an item per delta, end) and answers what
 * POST /api/message would have answered, `{conversation_id, status, messages}`, built from the
 * `message.start` and `message.end` events, so the node's output is the same either way.
 */
export async function streamMessage(
	this: IExecuteFunctions,
	itemIndex: number,
	streamUrl: string,
	request: { body: IDataObject; idempotencyKey?: string },
): Promise<IDataObject> {
	const where: Pick<ApiRequest, 'method' | 'path'> = { method: 'POST', path: STREAM_PATH };
	const headers: IDataObject = { Accept: 'text/event-stream' };
	if (request.idempotencyKey) headers['Idempotency-Key'] = request.idempotencyKey;
	const options: IHttpRequestOptions = {
		method: 'POST',
		url: `${streamUrl}${STREAM_PATH}`,
		headers,
		body: request.body,
		json: true,
		encoding: 'stream',
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
	};

	const response = await sendWithCredential(this, options, itemIndex);
	const { statusCode } = response;
	const contentType = headerText(response.headers, 'content-type');
	if (statusCode < 200 || statusCode >= 300 || !contentType.startsWith('text/event-stream')) {
		// An error before the stream starts is the API's ordinary JSON answer.
		const text = await readAll(response.body);
		if (statusCode >= 200 && statusCode < 300) {
			throw new NodeApiError(
				this.getNode(),
				{ statusCode, body: text.slice(0, 500) },
				{
					message: 'The Stream URL did not answer with an event stream',
					description: `POST ${STREAM_PATH} answered HTTP ${statusCode} with Content-Type "${contentType}". Check the Stream URL of the credential.`,
					httpCode: String(statusCode),
					itemIndex,
				},
			);
		}
		throw apiErrorFor(
			this,
			itemIndex,
			{ statusCode, body: parseJson(text), headers: response.headers },
			where,
		);
	}

	const body: unknown = response.body;
	if (!isAsyncIterable(body)) {
		throw new NodeApiError(
			this.getNode(),
			{ statusCode },
			{ message: 'The reply stream could not be read', itemIndex },
		);
	}
	const pieces = body[Symbol.asyncIterator]();
	const parser = new ServerSentEventParser();
	const reply = new ReplyForwarder(this, itemIndex);
	let finished = false;
	try {
		for (;;) {
			let next: IteratorResult<Uint8Array | string>;
			try {
				next = await pieces.next();
			} catch (error) {
				// not the raw error: n8n would replace the message by its text for the error code
				const cause = error instanceof Error ? error.message : String(error);
				throw new NodeApiError(
					this.getNode(),
					{ detail: cause },
					{
						message: 'The reply stream broke off',
						description: `POST ${STREAM_PATH}: ${cause}. Retry with the same Idempotency-Key: the API completes or replays the turn, never repeats it.`,
						itemIndex,
					},
				);
			}
			if (next.done === true) break;
			for (const event of parser.push(next.value)) reply.handle(event);
		}
		finished = true;
	} finally {
		reply.close();
		// stopped early (an event it could not read): close the connection, do not wait for its end
		if (!finished) await pieces.return?.();
	}
	return reply.answer();
}

/** Follows one stream's events: forwards the text to n8n and collects the stored messages. */
class ReplyForwarder {
	private conversationId: string | undefined;

	private status: string | undefined;

	private readonly messages: IDataObject[] = [];

	/** The message between its `message.start` and its `message.end`, if any. */
	private open = false;

	/** Whether text of the open message was forwarded (and would be voided by an `error`). */
	private forwardedOfOpen = false;

	private forwardedAny = false;

	private separator = '';

	private begun = false;

	private lastError = '';

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly itemIndex: number,
	) {}

	handle(event: ServerSentEvent): void {
		if (!['message.start', 'message.delta', 'message.end', 'error'].includes(event.event)) return;
		const data = parseJson(event.data);
		if (!isDataObject(data)) {
			throw new NodeApiError(
				this.context.getNode(),
				{ body: event.data.slice(0, 500) },
				{
					message: `The reply stream sent a "${event.event}" event that is not a JSON object`,
					itemIndex: this.itemIndex,
				},
			);
		}
		switch (event.event) {
			case 'message.start':
				if (typeof data.conversation_id === 'string') this.conversationId ??= data.conversation_id;
				if (typeof data.status === 'string') this.status = data.status;
				// without a message ID (the conversation is with a person), no message follows
				this.open = typeof data.message_id === 'string';
				this.forwardedOfOpen = false;
				if (this.open && this.forwardedAny) this.separator = MESSAGE_SEPARATOR;
				break;
			case 'message.delta':
				if (typeof data.text === 'string' && data.text !== '') this.forward(data.text);
				break;
			case 'message.end':
				this.messages.push(data);
				this.open = false;
				break;
			case 'error':
				this.lastError = typeof data.detail === 'string' ? data.detail : JSON.stringify(data);
				// the text since message.start is void: the fallback reply follows
				if (this.forwardedOfOpen) this.separator = BROKEN_OFF_SEPARATOR;
				this.forwardedOfOpen = false;
				break;
		}
	}

	private forward(text: string): void {
		if (!this.begun) {
			this.context.sendChunk('begin', this.itemIndex);
			this.begun = true;
		}
		this.context.sendChunk('item', this.itemIndex, this.separator + text);
		this.separator = '';
		this.forwardedOfOpen = true;
		this.forwardedAny = true;
	}

	close(): void {
		if (this.begun) this.context.sendChunk('end', this.itemIndex);
		this.begun = false;
	}

	/** What POST /api/message answers for the same turn. */
	answer(): IDataObject {
		if (this.open || (this.messages.length === 0 && this.lastError !== '')) {
			// e.g. the reply could not be stored: the turn is not complete
			throw new NodeApiError(
				this.context.getNode(),
				{ detail: this.lastError },
				{
					message: this.lastError || 'The reply stream ended before the reply was complete',
					description: `POST ${STREAM_PATH} ended without the reply being stored. Retry with the same Idempotency-Key: the API completes or replays the turn, never repeats it.`,
					itemIndex: this.itemIndex,
				},
			);
		}
		return { conversation_id: this.conversationId, status: this.status, messages: this.messages };
	}
}
