import type {
	IDataObject,
	IHookFunctions,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';

import { isDataObject, MANAGE_CREDENTIAL_TYPE } from '../ChatbotConversation/GenericFunctions';
import { managementRequest, WEBHOOK_ENDPOINTS_PATH } from './ManagementApi';
import { verifyWebhookSignature } from './WebhookSignature';

/** The events the API sends, as the trigger offers them. */
export const EVENT_OPTIONS = [
	{
		name: 'Conversation Closed',
		value: 'conversation.closed',
		description: 'A conversation was closed',
	},
	{
		name: 'Conversation Created',
		value: 'conversation.created',
		description: 'A visitor started a conversation with a chatbot',
	},
	{
		name: 'Conversation Handed Off',
		value: 'conversation.handoff',
		description: 'A conversation was handed off to a person',
	},
	{
		name: 'Conversation Rated',
		value: 'conversation.rated',
		description: 'A visitor rated a conversation (1–5)',
	},
	{
		name: 'Conversation Resumed',
		value: 'conversation.resumed',
		description: 'A handed-off conversation went back to the chatbot',
	},
	{
		name: 'Lookup Completed',
		value: 'lookup.completed',
		description: 'The chatbot looked something up with one of its tools (an order, say)',
	},
	{
		name: 'Message Created',
		value: 'message.created',
		description: "A message was added to a conversation: the visitor's or the chatbot's",
	},
	{
		name: 'Message Feedback',
		value: 'message.feedback',
		description: 'A visitor gave a chatbot reply a thumb up or down',
	},
];

/** What the trigger keeps in the workflow's static data while the workflow is active. */
interface Registration {
	/** The webhook endpoint the API created for this node. */
	endpointId?: string;
	/** Its signing secret (`whsec_…`), which the API shows only when the endpoint is created. */
	secret?: string;
}

function registrationOf(context: IHookFunctions | IWebhookFunctions): Registration & IDataObject {
	return context.getWorkflowStaticData('node') as Registration & IDataObject;
}

function forget(registration: Registration): void {
	delete registration.endpointId;
	delete registration.secret;
}

function selectedEvents(context: IHookFunctions | IWebhookFunctions): string[] {
	const events = context.getNodeParameter('events', []) as unknown;
	return Array.isArray(events)
		? events.filter((event): event is string => typeof event === 'string')
		: [];
}

function endpointPath(endpointId: string): string {
	return `${WEBHOOK_ENDPOINTS_PATH}/${encodeURIComponent(endpointId)}`;
}

/** Deletes an endpoint of the API; one that is gone already counts as deleted. */
async function deleteEndpoint(context: IHookFunctions, endpointId: string): Promise<void> {
	await managementRequest.call(context, 'DELETE', endpointPath(endpointId), { expected: [404] });
}

/** Whether an endpoint, as the API describes it, delivers what this node wants where it listens. */
function endpointServes(endpoint: IDataObject, url: string, events: string[]): boolean {
	const registered = Array.isArray(endpoint.events) ? endpoint.events.map(String) : [];
	return (
		endpoint.url === url &&
		endpoint.enabled === true &&
		// A secret rotated elsewhere (the console, say) is one this node does not hold.
		!endpoint.previous_secret_expires_at &&
		registered.length === events.length &&
		events.every((event) => registered.includes(event))
	);
}

export class ChatbotConversationTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Chatbot Conversation Trigger',
		name: 'chatbotConversationTrigger',
		icon: { light: 'file:../../icons/chatbot.svg', dark: 'file:../../icons/chatbot.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{$parameter["events"].join(", ")}}',
		description:
			'Starts the workflow when the Chatbot Conversation API sends an event: a new conversation, a message, a handoff',
		defaults: { name: 'Chatbot Conversation Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: MANAGE_CREDENTIAL_TYPE, required: true }],
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				path: 'webhook',
			},
		],
		properties: [
			{
				displayName:
					'Needs an API key of scope "manage": activating the workflow registers a webhook endpoint with the API, deactivating it removes the endpoint',
				name: 'scopeNotice',
				type: 'notice',
				default: '',
			},
			{
				displayName: 'Events',
				name: 'events',
				type: 'multiOptions',
				required: true,
				default: [],
				options: EVENT_OPTIONS,
				description: 'The events that start the workflow',
			},
		],
	};

	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				const registration = registrationOf(this);
				const { endpointId } = registration;
				if (typeof endpointId !== 'string') return false;

				const found = await managementRequest.call(this, 'GET', endpointPath(endpointId), {
					expected: [404],
				});
				if (found.statusCode === 404) {
					forget(registration);
					return false;
				}
				const url = this.getNodeWebhookUrl('default') ?? '';
				if (
					typeof registration.secret === 'string' &&
					found.body !== undefined &&
					endpointServes(found.body, url, selectedEvents(this))
				) {
					return true;
				}
				// Registered, but not as this node needs it now (another URL or events, disabled after
				// failing for days, or its secret rotated elsewhere): replace it with a new one.
				await deleteEndpoint(this, endpointId);
				forget(registration);
				return false;
			},

			async create(this: IHookFunctions): Promise<boolean> {
				const url = this.getNodeWebhookUrl('default');
				if (!url)
					throw new NodeOperationError(this.getNode(), 'n8n gave no webhook URL for this node');
				const events = selectedEvents(this);
				if (events.length === 0) {
					throw new NodeOperationError(this.getNode(), 'Choose at least one event', {
						description: 'The API sends only the events an endpoint subscribes to.',
					});
				}
				const { name, id } = this.getWorkflow();
				// Names the workflow for whoever reads the endpoint list in the console.
				const description = `n8n: workflow "${name ?? ''}" (${id ?? ''})`.slice(0, 200);
				const { body: created } = await managementRequest.call(
					this,
					'POST',
					WEBHOOK_ENDPOINTS_PATH,
					{
						body: { url, events, description },
					},
				);
				if (
					!created ||
					typeof created.endpoint_id !== 'string' ||
					typeof created.secret !== 'string'
				) {
					throw new NodeOperationError(
						this.getNode(),
						'The API did not answer with the ID and secret of the new webhook endpoint',
					);
				}
				const registration = registrationOf(this);
				registration.endpointId = created.endpoint_id;
				registration.secret = created.secret;
				return true;
			},

			async delete(this: IHookFunctions): Promise<boolean> {
				const registration = registrationOf(this);
				if (typeof registration.endpointId === 'string') {
					// Throws (keeping the ID, so a later activation finds the endpoint) unless it is gone.
					await deleteEndpoint(this, registration.endpointId);
				}
				forget(registration);
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const { secret } = registrationOf(this);
		const rawBody: unknown = this.getRequestObject().rawBody;
		const body = Buffer.isBuffer(rawBody) ? rawBody : Buffer.alloc(0);
		const verification =
			typeof secret === 'string'
				? verifyWebhookSignature(secret, this.getHeaderData(), body, Math.floor(Date.now() / 1000))
				: { valid: false as const, reason: 'not_registered' };
		if (!verification.valid) {
			// Refused before anything runs: a forged, replayed or unsigned request starts nothing.
			this.getResponseObject()
				.status(401)
				.json({ error: 'invalid_signature', reason: verification.reason });
			return { noWebhookResponse: true };
		}

		let event: unknown;
		try {
			event = JSON.parse(body.toString('utf8'));
		} catch {
			event = undefined;
		}
		if (!isDataObject(event) || typeof event.type !== 'string') {
			this.getResponseObject().status(400).json({ error: 'invalid_event' });
			return { noWebhookResponse: true };
		}
		if (!selectedEvents(this).includes(event.type)) {
			// Signed, but not an event this node listens to: acknowledged, nothing started.
			return { webhookResponse: { received: true } };
		}
		return {
			workflowData: [
				[
					{
						json: {
							event_id: verification.eventId,
							type: event.type,
							timestamp: event.timestamp ?? null,
							data: isDataObject(event.data) ? event.data : {},
						},
					},
				],
			],
		};
	}
}
