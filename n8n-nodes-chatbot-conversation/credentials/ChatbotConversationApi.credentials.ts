import type {
	IAuthenticateGeneric,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

/**
 * One credential pins the server (base URL, and the streaming endpoint's base URL when there is
 * one) and the API key, sent as `Authorization: Bearer <key>` on every request.
 */
export class ChatbotConversationApi implements ICredentialType {
	name = 'chatbotConversationApi';

	displayName = 'Chatbot Conversation API';

	icon: Icon = {
		light: 'file:../icons/chatbot.svg',
		dark: 'file:../icons/chatbot.dark.svg',
	};

	documentationUrl = 'https://www.npmjs.com/package/n8n-nodes-chatbot-conversation#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'https://api-v1.example.com',
			description:
				'Address of the Chatbot Conversation API, without a trailing /api (for example https://api-v1.example.com). The console shows it under Settings → API.',
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				"Your organization's API key (it starts with cbk_). Create one in the console under Settings → API (admins; the key is shown once). Sent as a Bearer token.",
		},
		{
			displayName: 'Stream URL',
			name: 'streamUrl',
			type: 'string',
			default: '',
			placeholder: 'https://abc123.lambda-url.eu-west-1.on.aws/',
			description:
				"Optional. Base URL of the API's streaming endpoint, used by Message → Send when the workflow streams its response (a Webhook or Chat Trigger set to stream). The console shows it under Settings → API (Streamed replies); it is the stack output StreamUrl. Leave empty to never stream.",
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: '=Bearer {{$credentials.apiKey}}',
			},
		},
	};

	// GET /api/me needs a valid key (GET /ping does not), so a wrong key fails the test.
	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl}}',
			url: '/api/me',
			method: 'GET',
		},
	};
}
