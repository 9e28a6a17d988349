import type {
	IDataObject,
	IExecuteFunctions,
	IHookFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

/** The public API's credential: a key of either scope, for conversations and messages. */
export const CREDENTIAL_TYPE = 'chatbotConversationApi';
/** A key of scope `manage`, for what only the management API does (a person's reply, webhooks). */
export const MANAGE_CREDENTIAL_TYPE = 'chatbotConversationManageApi';

/** Media types the API accepts for an image sent as base64 `data`. */
export const IMAGE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;

export interface ApiRequest {
	method: IHttpRequestMethods;
	/** Path below the base URL, starting with `/api/`. */
	path: string;
	body?: IDataObject;
	qs?: IDataObject;
	/** Sent as the `Idempotency-Key` header when not empty. */
	idempotencyKey?: string;
}

export interface ApiErrorText {
	message: string;
	description: string;
}

export function isDataObject(value: unknown): value is IDataObject {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
	if (typeof value === 'string') return value;
	if (value === undefined || value === null) return '';
	return JSON.stringify(value);
}

/** A URL field of the credential, trimmed, without trailing slashes ('' when empty). */
export function withoutTrailingSlash(value: unknown): string {
	return text(value).trim().replace(/\/+$/, '');
}

function headerValue(headers: IDataObject | undefined, name: string): string | undefined {
	if (!headers) return undefined;
	const wanted = name.toLowerCase();
	for (const [key, value] of Object.entries(headers)) {
		if (key.toLowerCase() === wanted && value !== undefined && value !== null) {
			return Array.isArray(value) ? text(value[0]) : text(value);
		}
	}
	return undefined;
}

/** `["body","attachments",0,"type"]` → `body.attachments.0.type` */
function formatLocation(loc: unknown): string {
	return Array.isArray(loc) ? loc.map((part) => text(part)).join('.') : text(loc);
}

/**
 * Turns an error response of the API (`{"detail": …}`) into the message and
 * description of an n8n error: the API's own words first, the HTTP status in the description.
 */
export function describeApiError(
	statusCode: number,
	body: unknown,
	headers?: IDataObject,
	request?: Pick<ApiRequest, 'method' | 'path'>,
): ApiErrorText {
	const where = request ? ` (${request.method} ${request.path})` : '';
	const status = `The Chatbot Conversation API answered HTTP ${statusCode}${where}.`;
	const detail: unknown = isDataObject(body) ? body.detail : undefined;

	if (Array.isArray(detail)) {
		// 422: Pydantic-style validation items {type, loc, msg, input}
		const items = detail.map((item: unknown) =>
			isDataObject(item) ? `${formatLocation(item.loc)}: ${text(item.msg)}` : text(item),
		);
		const lines = detail.map((item: unknown, index) => {
			const line = items[index] ?? '';
			return isDataObject(item) && item.type ? `${line} (${text(item.type)})` : line;
		});
		return {
			message: `Validation failed: ${items.join('; ')}`,
			description: `${status}\n${lines.join('\n')}`,
		};
	}

	if (isDataObject(detail)) {
		// 429: {error, message, limit, remaining, reset, retry_after} plus a Retry-After header
		const retryAfter = detail.retry_after ?? headerValue(headers, 'retry-after');
		const title =
			text(detail.error) || (statusCode === 429 ? 'Rate limit exceeded' : 'Request failed');
		const retry = retryAfter !== undefined ? `: retry after ${text(retryAfter)} seconds` : '';
		const facts: string[] = [];
		if (detail.message) facts.push(text(detail.message));
		if (detail.limit !== undefined) facts.push(`Limit: ${text(detail.limit)} requests per minute.`);
		if (detail.reset !== undefined) facts.push(`Bucket full again at ${text(detail.reset)}.`);
		return {
			message: `${title}${retry}`,
			description: [status, ...facts].join(' '),
		};
	}

	if (typeof detail === 'string' && detail !== '') {
		const hint = statusCode === 401 ? ' Check the API key and the base URL of the credential.' : '';
		return { message: detail, description: `${status}${hint}` };
	}

	const raw = text(body).slice(0, 500);
	return {
		message: `Request failed with HTTP ${statusCode}`,
		description: raw ? `${status} Response: ${raw}` : status,
	};
}

/**
 * One authenticated call to the API. Non-2xx answers become a NodeApiError carrying the
 * API's `detail`; network failures become a NodeApiError too.
 */
export async function apiRequest(
	this: IExecuteFunctions,
	itemIndex: number,
	request: ApiRequest,
): Promise<IDataObject> {
	const credentials = await this.getCredentials(CREDENTIAL_TYPE, itemIndex);
	const baseUrl = withoutTrailingSlash(credentials.baseUrl);
	if (!baseUrl) {
		throw new NodeOperationError(this.getNode(), 'The credential has no Base URL', { itemIndex });
	}

	const headers: IDataObject = { Accept: 'application/json' };
	if (request.idempotencyKey) headers['Idempotency-Key'] = request.idempotencyKey;
	const options: IHttpRequestOptions = {
		method: request.method,
		url: `${baseUrl}${request.path}`,
		headers,
		json: true,
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
	};
	if (request.body !== undefined) options.body = request.body;
	if (request.qs !== undefined) options.qs = request.qs;

	const response = await sendWithCredential(this, options, itemIndex);
	const { statusCode, body } = response;
	if (statusCode >= 200 && statusCode < 300) {
		if (isDataObject(body)) return body;
		throw new NodeApiError(
			this.getNode(),
			{ statusCode, body: text(body) },
			{
				message: 'The Chatbot Conversation API returned a response that is not a JSON object',
				description: text(body).slice(0, 500),
				httpCode: String(statusCode),
				itemIndex,
			},
		);
	}

	throw apiErrorFor(this, itemIndex, { statusCode, body, headers: response.headers }, request);
}

/**
 * Sends a request signed with the credential and returns the full answer, whatever its status; only
 * getting no answer at all (refused, reset, timed out) is an error, a NodeApiError.
 */
export async function sendWithCredential(
	context: IExecuteFunctions | IHookFunctions,
	options: IHttpRequestOptions,
	itemIndex?: number,
	credentialType: string = CREDENTIAL_TYPE,
): Promise<IN8nHttpFullResponse> {
	try {
		return (await context.helpers.httpRequestWithAuthentication.call(
			context,
			credentialType,
			options,
		)) as IN8nHttpFullResponse;
	} catch (error) {
		throw new NodeApiError(
			context.getNode(),
			error as JsonObject,
			itemIndex === undefined ? {} : { itemIndex },
		);
	}
}

/** The NodeApiError for an error answer (non-2xx) of the API, the same for every endpoint. */
export function apiErrorFor(
	context: IExecuteFunctions,
	itemIndex: number,
	answer: { statusCode: number; body: unknown; headers?: IDataObject },
	request: Pick<ApiRequest, 'method' | 'path'>,
): NodeApiError {
	const { statusCode, body } = answer;
	const { message, description } = describeApiError(statusCode, body, answer.headers, request);
	const errorResponse: JsonObject = { statusCode };
	if (isDataObject(body)) errorResponse.body = body as JsonObject;
	return new NodeApiError(context.getNode(), errorResponse, {
		message,
		description,
		httpCode: String(statusCode),
		itemIndex,
	});
}
