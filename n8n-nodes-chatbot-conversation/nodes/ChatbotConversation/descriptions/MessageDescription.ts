import type { INodeProperties } from 'n8n-workflow';

const showForMessage = { resource: ['message'] };
const showForSend = { resource: ['message'], operation: ['send'] };
const showForFeedback = { resource: ['message'], operation: ['giveFeedback'] };

export const messageOperations: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: showForMessage },
		options: [
			{
				name: 'Give Feedback',
				value: 'giveFeedback',
				description:
					"Record the visitor's thumb up or down on one of the chatbot's replies (giving it again replaces it)",
				action: 'Give feedback on a reply',
			},
			{
				name: 'Send',
				value: 'send',
				description: "Send a message in a conversation and get the chatbot's reply",
				action: 'Send a message',
			},
		],
		default: 'send',
	},
];

export const messageFields: INodeProperties[] = [
	/* message:giveFeedback */
	{
		displayName: 'Message ID',
		name: 'messageId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. {{ $json.message_id }}',
		description: "ID (UUID) of the chatbot's reply, as Message → Send returns it",
		displayOptions: { show: showForFeedback },
	},
	{
		displayName: 'Rating',
		name: 'rating',
		type: 'options',
		options: [
			{ name: 'Thumbs Down', value: 'down', description: 'The reply did not help' },
			{ name: 'Thumbs Up', value: 'up', description: 'The reply helped' },
		],
		default: 'up',
		description: 'Whether the reply helped the visitor',
		displayOptions: { show: showForFeedback },
	},
	{
		displayName: 'Comment',
		name: 'feedbackComment',
		type: 'string',
		default: '',
		typeOptions: { rows: 2 },
		description: 'What the visitor said about the reply (at most 2,000 characters)',
		displayOptions: { show: showForFeedback },
	},

	/* message:send */
	{
		displayName: 'Conversation ID',
		name: 'conversationId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. {{ $json.conversation_id }}',
		description: 'ID (UUID) of the conversation, as returned by Conversation → Start',
		displayOptions: { show: showForSend },
	},
	{
		displayName: 'Text',
		name: 'text',
		type: 'string',
		required: true,
		default: '',
		typeOptions: { rows: 3 },
		description: "Text of the visitor's message",
		displayOptions: { show: showForSend },
	},
	{
		displayName: 'Attachments',
		name: 'attachments',
		type: 'fixedCollection',
		placeholder: 'Add Image',
		default: {},
		typeOptions: { multipleValues: true },
		description: 'Images sent with the message (at most 4)',
		displayOptions: { show: showForSend },
		options: [
			{
				displayName: 'Image',
				name: 'image',
				values: [
					{
						displayName: 'Source',
						name: 'source',
						type: 'options',
						default: 'url',
						description: 'Where the image comes from',
						options: [
							{
								name: 'URL',
								value: 'url',
								description: 'A public https:// address that the API fetches',
							},
							{
								name: 'Binary Data',
								value: 'binary',
								description:
									'A file in the binary data of the input item (PNG, JPEG, GIF or WebP), sent as base64',
							},
						],
					},
					{
						displayName: 'Image URL',
						name: 'url',
						type: 'string',
						default: '',
						placeholder: 'https://example.com/photo.jpg',
						description: 'Public https:// address of the image',
						displayOptions: { show: { source: ['url'] } },
					},
					{
						displayName: 'Input Binary Field',
						name: 'binaryPropertyName',
						type: 'string',
						default: 'data',
						hint: 'The name of the input binary field containing the image',
						description: 'Name of the binary property of the input item that holds the image',
						displayOptions: { show: { source: ['binary'] } },
					},
				],
			},
		],
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		description: 'Optional request and output settings',
		displayOptions: { show: showForSend },
		options: [
			{
				displayName: 'Idempotency Key',
				name: 'idempotencyKey',
				type: 'string',
				default: '',
				description:
					'Sent as the Idempotency-Key header (1 to 255 printable characters). Repeating the request with the same key and body within 24 hours replays the first reply instead of sending the message twice.',
			},
			{
				displayName: 'Output',
				name: 'output',
				type: 'options',
				default: 'split',
				description: 'How the reply messages of the chatbot become output items',
				options: [
					{
						name: 'One Item per Reply Message',
						value: 'split',
						description:
							'Each reply message is an item: conversation_id, message_id, role, content, created_at',
					},
					{
						name: 'Single Item',
						value: 'single',
						description:
							'One item with conversation_id, the messages array and reply (all reply texts joined)',
					},
				],
			},
		],
	},
];
