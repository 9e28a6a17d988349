import type { INodeProperties } from 'n8n-workflow';

const showForConversation = { resource: ['conversation'] };
const showForStart = { resource: ['conversation'], operation: ['start'] };
const showForGetMany = { resource: ['conversation'], operation: ['getAll'] };
const showForPaged = { resource: ['conversation'], operation: ['getAll', 'getMessages'] };
const showForOneConversation = {
	resource: ['conversation'],
	operation: ['close', 'get', 'getMessages', 'handOff', 'rate', 'replyAsPerson'],
};
const showForRate = { resource: ['conversation'], operation: ['rate'] };
const showForHandOff = { resource: ['conversation'], operation: ['handOff'] };
const showForReply = { resource: ['conversation'], operation: ['replyAsPerson'] };

export const conversationOperations: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: showForConversation },
		options: [
			{
				name: 'Close',
				value: 'close',
				description: 'Close a conversation: the chatbot and people answer it no more',
				action: 'Close a conversation',
			},
			{
				name: 'Get',
				value: 'get',
				description: 'Get a conversation: its chatbot, contact, status and message count',
				action: 'Get a conversation',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				description:
					"Get your organization's conversations, most recent activity first, filtered by chatbot, contact, external ID or status",
				action: 'Get many conversations',
			},
			{
				name: 'Get Messages',
				value: 'getMessages',
				description: 'Read the messages of a conversation, oldest first',
				action: 'Get messages of a conversation',
			},
			{
				name: 'Hand Off',
				value: 'handOff',
				description: 'Hand a conversation to a person: the chatbot stops answering it',
				action: 'Hand off a conversation to a person',
			},
			{
				name: 'Rate',
				value: 'rate',
				description:
					"Record the visitor's satisfaction with a conversation, 1 to 5 (rating again replaces it)",
				action: 'Rate a conversation',
			},
			{
				name: 'Reply as Person',
				value: 'replyAsPerson',
				description:
					'Send the visitor a message from a person of your team (needs a key of scope manage)',
				action: 'Reply as a person',
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

	/* conversation: one conversation (close, get, getMessages, handOff, rate, replyAsPerson) */
	{
		displayName: 'Conversation ID',
		name: 'conversationId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. {{ $json.conversation_id }}',
		description: 'ID (UUID) of the conversation, as returned by Conversation → Start',
		displayOptions: { show: showForOneConversation },
	},

	/* conversation:handOff */
	{
		displayName: 'Reason',
		name: 'reason',
		type: 'string',
		default: '',
		typeOptions: { rows: 2 },
		description:
			'Why the conversation needs a person (at most 500 characters); stored with the handoff and shown to your team',
		displayOptions: { show: showForHandOff },
	},

	/* conversation:rate */
	{
		displayName: 'Score',
		name: 'score',
		type: 'number',
		required: true,
		default: 5,
		typeOptions: { minValue: 1, maxValue: 5, numberPrecision: 0 },
		description:
			"The visitor's satisfaction with the conversation: 1 (very unhappy) to 5 (very happy)",
		displayOptions: { show: showForRate },
	},
	{
		displayName: 'Comment',
		name: 'ratingComment',
		type: 'string',
		default: '',
		typeOptions: { rows: 2 },
		description: 'What the visitor said about the conversation (at most 2,000 characters)',
		displayOptions: { show: showForRate },
	},

	/* conversation:replyAsPerson */
	{
		displayName: 'Text',
		name: 'replyText',
		type: 'string',
		required: true,
		default: '',
		typeOptions: { rows: 3 },
		description:
			'What the person says to the visitor. An open conversation is taken over first: the chatbot stops answering until a person hands it back.',
		displayOptions: { show: showForReply },
	},
	{
		displayName: 'Display Name',
		name: 'displayName',
		type: 'string',
		default: '',
		placeholder: 'e.g. Ada from Support',
		description:
			'The name the visitor sees on the reply. Empty: "Support team" (a key of scope manage is no person).',
		displayOptions: { show: showForReply },
	},

	/* conversation:getAll */
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		description: 'Only the conversations that match every filter given',
		displayOptions: { show: showForGetMany },
		options: [
			{
				displayName: 'Chatbot ID',
				name: 'chatbotId',
				type: 'string',
				default: '',
				description: 'ID (UUID) of the chatbot the conversations are with',
			},
			{
				displayName: 'Contact ID',
				name: 'contactId',
				type: 'string',
				default: '',
				description: 'ID (UUID) of the contact the conversations are with',
			},
			{
				displayName: 'External ID',
				name: 'externalId',
				type: 'string',
				default: '',
				description: 'Your own identifier, as given to Conversation → Start',
			},
			{
				displayName: 'Status',
				name: 'status',
				type: 'options',
				default: 'handoff',
				description: 'The conversations in this state',
				options: [
					{ name: 'Closed', value: 'closed' },
					{ name: 'Handoff (Waiting for a Person)', value: 'handoff' },
					{ name: 'Open', value: 'open' },
				],
			},
		],
	},

	/* conversation:getAll and getMessages */
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
		displayOptions: { show: showForPaged },
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { ...showForPaged, returnAll: [false] } },
	},
];
