import type {
	IAuthenticateGeneric,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

/**
 * A key of scope `manage`: it acts as an admin of its organization on the management API. Only
 * what needs one uses this credential (Conversation → Reply as Person, and the trigger, which
 * registers webhook endpoints), so workflows that hold conversations keep a `chat` key. Its test
 * calls `GET /manage/me`, which answers a `manage` key only: a `chat` key fails the test.
 */
export class ChatbotConversationManageApi implements ICredentialType {
	name = 'chatbotConversationManageApi';

	displayName = 'Chatbot Conversation Management API';

	icon: Icon = {
		light: 'file:../icons/chatbot.svg',
		dark: 'file:../icons/chatbot.dark.svg',
	};

	documentationUrl =
		'https://www.npmjs.com/package/n8n-nodes-chatbot-conversation#management-credential';

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
			displayName: 'API Key (Scope Manage)',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				'An API key of scope "manage" (it starts with cbk_). It acts as an admin of your organization: create it in the console under Settings → API with the scope "Manage", and use it only where a workflow needs it.',
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

	// GET /manage/me answers a key of scope manage; a chat key gets 403, so the test tells them apart.
	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl}}',
			url: '/manage/me',
			method: 'GET',
		},
	};
}
