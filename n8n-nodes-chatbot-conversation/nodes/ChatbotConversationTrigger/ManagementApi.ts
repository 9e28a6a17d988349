import type {
	IDataObject,
	IExecuteFunctions,
	IHookFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import {
	isDataObject,
	MANAGE_CREDENTIAL_TYPE,
	sendWithCredential,
} from '../ChatbotConversation/GenericFunctions';

/** What asks the management API: the trigger (webhook endpoints) or a person's reply. */
export type ManagementPurpose = 'trigger' | 'reply';

/** The webhook endpoints of the management API, which a key of scope `manage` may call. */
export const WEBHOOK_ENDPOINTS_PATH = '/manage/webhook-endpoints';

export interface ManagementErrorText {
	message: string;
	description: string;
}

function text(value: unknown): string {
	if (typeof value === 'string') return value;
	if (value === undefined || value === null) return '';
	return JSON.stringify(value);
}

/**
 * Turns an error of the management API (`{"error": {"code", "message", "details"}}`) into the
 * message and description of an n8n error, with advice for the mistakes a trigger's user can make:
 * a key of scope `chat`, or an n8n whose webhook URL the API may not call. The description stands
 * on its own (advice first, then the HTTP exchange): n8n shows only it when activation fails.
 */
export function describeManagementError(
	statusCode: number,
	body: unknown,
	request: { method: string; path: string },
	purpose: ManagementPurpose = 'trigger',
): ManagementErrorText {
	const error = isDataObject(body) && isDataObject(body.error) ? body.error : undefined;
	const code = text(error?.code);
	const apiMessage = text(error?.message);
	const exchange = `(The Chatbot Conversation API answered HTTP ${statusCode}${code ? ` ${code}` : ''} to ${request.method} ${request.path}.)`;

	if (statusCode === 403 && code === 'forbidden' && purpose === 'reply') {
		return {
			message:
				'The API key may not reply as a person: Reply as Person needs a key of scope "manage"',
			description: `A person's reply is a management route, which only an API key of scope "manage" may call; keys of scope "chat" can only hold conversations. Use a Chatbot Conversation Management API credential with a key of scope "manage". ${exchange}`,
		};
	}
	if (statusCode === 403 && code === 'forbidden') {
		return {
			message:
				'The API key may not manage webhook endpoints: the trigger needs a key of scope "manage"',
			description: `This trigger needs an API key of scope "manage" to register its webhook endpoint; keys of scope "chat" can only hold conversations. Use a key of scope "manage" in the trigger's credential. ${exchange}`,
		};
	}
	if (statusCode === 401) {
		const message = apiMessage || 'Invalid API key';
		return {
			message,
			description: `${message}: check the API key and the base URL of the credential. ${exchange}`,
		};
	}
	if (statusCode === 422 && code === 'invalid_argument') {
		const details = isDataObject(error?.details) ? error.details : {};
		const fields = (Array.isArray(details.fields) ? details.fields : []).filter(isDataObject);
		const problems = fields
			.map((field) => {
				const location = Array.isArray(field.loc) ? field.loc.map(text).join('.') : text(field.loc);
				return `${location}: ${text(field.msg)}`;
			})
			.join('; ');
		const urlRefused = fields.some(
			(field) => Array.isArray(field.loc) && field.loc[0] === 'body' && field.loc[1] === 'url',
		);
		const message = problems ? `Validation failed: ${problems}` : apiMessage;
		return {
			message,
			description: urlRefused
				? `The API refused n8n's webhook URL (${problems}). It only calls https addresses on the public internet: set n8n's WEBHOOK_URL (N8N_WEBHOOK_URL from n8n 2.35) to the public https address of this n8n. ${exchange}`
				: `${message} ${exchange}`,
		};
	}
	if (apiMessage) return { message: apiMessage, description: `${apiMessage} ${exchange}` };
	const raw = text(body).slice(0, 500);
	return {
		message: `Request failed with HTTP ${statusCode}`,
		description: raw ? `Response: ${raw} ${exchange}` : exchange,
	};
}

export interface ManagementAnswer {
	statusCode: number;
	/** The JSON object answered, if any (a 204 has none). */
	body?: IDataObject;
}

/**
 * One authenticated call to the management API (with the credential of scope `manage`), whatever
 * its status. `expected` lists the statuses the caller handles itself (404, say); any other non-2xx
 * answer throws a NodeApiError carrying the status as `httpCode` and the API's own message.
 */
export async function managementRequest(
	this: IHookFunctions | IExecuteFunctions,
	method: IHttpRequestMethods,
	path: string,
	options: {
		body?: IDataObject;
		expected?: number[];
		itemIndex?: number;
		purpose?: ManagementPurpose;
	} = {},
): Promise<ManagementAnswer> {
	const credentials = await this.getCredentials(MANAGE_CREDENTIAL_TYPE, options.itemIndex);
	const baseUrl = text(credentials.baseUrl).trim().replace(/\/+$/, '');
	if (!baseUrl) {
		throw new NodeOperationError(
			this.getNode(),
			'The credential has no Base URL',
			options.itemIndex === undefined ? {} : { itemIndex: options.itemIndex },
		);
	}

	const request: IHttpRequestOptions = {
		method,
		url: `${baseUrl}${path}`,
		headers: { Accept: 'application/json' },
		json: true,
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
	};
	if (options.body !== undefined) request.body = options.body;

	const response = await sendWithCredential(
		this,
		request,
		options.itemIndex,
		MANAGE_CREDENTIAL_TYPE,
	);
	const { statusCode } = response;
	const body = isDataObject(response.body) ? response.body : undefined;
	if ((statusCode >= 200 && statusCode < 300) || options.expected?.includes(statusCode)) {
		return body === undefined ? { statusCode } : { statusCode, body };
	}
	const { message, description } = describeManagementError(
		statusCode,
		response.body,
		{ method, path },
		options.purpose,
	);
	const errorResponse: JsonObject = { statusCode };
	if (body !== undefined) errorResponse.body = body as JsonObject;
	throw new NodeApiError(this.getNode(), errorResponse, {
		message,
		description,
		httpCode: String(statusCode),
		...(options.itemIndex === undefined ? {} : { itemIndex: options.itemIndex }),
	});
}
