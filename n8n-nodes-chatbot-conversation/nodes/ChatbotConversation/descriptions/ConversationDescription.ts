import type { INodeProperties } from 'n8n-workflow';

const showForConversation = { resource: ['conversation'] };
const showForStart = { resource: ['conversation'], operation: ['start'] };
const showForGetMessages = { resource: ['conversation'], operation: ['getMessages'] };

export const conversationOperations: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: showForConversation },
		options: [
			{
				name: 'Get Messages',
				value: 'getMessages',
				description: 'Read the messages of a conversation, oldest first',
				action: 'Get messages of a conversation',
			},
			{
				name: 'Start',
				value: 'start',
				description: 'Start a new conversation with a chatbot',
				action: 'Start a conversation',
			},
		],
		default: 'start',
	},
];

export const conversationFields: INodeProperties[] = [
	/* conversation:start */
	{
		displayName: 'Chatbot ID',
		name: 'chatbotId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 3f2b6c1e-8d4a-4f5e-9b7c-2a1d0e9f8c7b',
		description: 'ID (UUID) of the chatbot to talk to, from the dashboard of your organization',
		displayOptions: { show: showForStart },
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		description: 'Optional details of the contact and the conversation',
		displayOptions: { show: showForStart },
		options: [
			{
				displayName: 'Contact ID',
				name: 'contactId',
				type: 'string',
				default: '',
				description:
					'ID (UUID) of an existing contact of your organization to reuse, or a new ID to create the contact with. Leave empty to let the API generate one.',
			},
			{
				displayName: 'Email',
				name: 'userEmail',
				type: 'string',
				placeholder: 'name@email.com',
				default: '',
				description: 'Email address of the contact',
			},
			{
				displayName: 'External ID',
				name: 'externalId',
				type: 'string',
				default: '',
				description: 'Your own identifier for this conversation, stored with it',
			},
			{
				displayName: 'Name',
				name: 'userName',
				type: 'string',
				default: '',
				description: 'Name of the contact',
			},
			{
				displayName: 'Phone',
				name: 'userPhone',
				type: 'string',
				default: '',
				description: 'Telephone number of the contact',
			},
		],
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		description: 'Optional request settings',
		displayOptions: { show: showForStart },
		options: [
			{
				displayName: 'Idempotency Key',
				name: 'idempotencyKey',
				type: 'string',
				default: '',
				description:
					'Sent as the Idempotency-Key header (1 to 255 printable characters). Repeating the request with the same key and body within 24 hours replays the first answer instead of starting a second conversation.',
			},
		],
	},

	/* conversation:getMessages */
	{
		displayName: 'Conversation ID',
		name: 'conversationId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. {{ $json.conversation_id }}',
		description: 'ID (UUID) of the conversation, as returned by Conversation → Start',
		displayOptions: { show: showForGetMessages },
	},
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
		displayOptions: { show: showForGetMessages },
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { ...showForGetMessages, returnAll: [false] } },
	},
];
