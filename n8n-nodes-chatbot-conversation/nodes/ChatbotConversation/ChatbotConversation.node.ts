import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeApiError, NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';

import { conversationFields, conversationOperations } from './descriptions/ConversationDescription';
import { messageFields, messageOperations } from './descriptions/MessageDescription';
import { CREDENTIAL_TYPE, MANAGE_CREDENTIAL_TYPE } from './GenericFunctions';
import {
	closeConversation,
	getConversation,
	getManyConversations,
	getMessages,
	giveFeedback,
	handOffConversation,
	rateConversation,
	replyAsPerson,
	sendMessage,
	startConversation,
} from './operations';

type Operation = (this: IExecuteFunctions, itemIndex: number) => Promise<IDataObject[]>;

const OPERATIONS: Record<string, Record<string, Operation>> = {
	conversation: {
		start: startConversation,
		get: getConversation,
		getAll: getManyConversations,
		getMessages,
		handOff: handOffConversation,
		close: closeConversation,
		rate: rateConversation,
		replyAsPerson,
	},
	message: { send: sendMessage, giveFeedback },
};

function toNodeError(
	context: IExecuteFunctions,
	error: unknown,
	itemIndex: number,
): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	return new NodeOperationError(context.getNode(), error instanceof Error ? error : String(error), {
		itemIndex,
	});
}

export class ChatbotConversation implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Chatbot Conversation',
		name: 'chatbotConversation',
		icon: { light: 'file:../../icons/chatbot.svg', dark: 'file:../../icons/chatbot.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description:
			'Start conversations with a chatbot of the Chatbot Conversation API, send it messages, read them, hand them to a person, reply as that person and close them',
		defaults: { name: 'Chatbot Conversation' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		// A person's reply is a management route: it takes a key of scope manage, in a credential of
		// its own, so the workflows that only hold conversations keep a key of scope chat.
		credentials: [
			{
				name: CREDENTIAL_TYPE,
				required: true,
				displayOptions: { hide: { operation: ['replyAsPerson'] } },
			},
			{
				name: MANAGE_CREDENTIAL_TYPE,
				required: true,
				displayOptions: { show: { operation: ['replyAsPerson'] } },
			},
		],
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: [
					{ name: 'Conversation', value: 'conversation' },
					{ name: 'Message', value: 'message' },
				],
				default: 'conversation',
			},
			...conversationOperations,
			...conversationFields,
			...messageOperations,
			...messageFields,
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const returnData: INodeExecutionData[] = [];

		for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
			try {
				const resource = String(this.getNodeParameter('resource', itemIndex));
				const operation = String(this.getNodeParameter('operation', itemIndex));
				const run = OPERATIONS[resource]?.[operation];
				if (!run) {
					throw new NodeOperationError(
						this.getNode(),
						`The operation "${operation}" of resource "${resource}" is not supported`,
						{ itemIndex },
					);
				}
				const results = await run.call(this, itemIndex);
				for (const json of results) {
					returnData.push({ json, pairedItem: { item: itemIndex } });
				}
			} catch (error) {
				const nodeError = toNodeError(this, error, itemIndex);
				if (this.continueOnFail()) {
					const json: IDataObject = { error: nodeError.message };
					if (nodeError.description) json.description = nodeError.description;
					if (nodeError instanceof NodeApiError && nodeError.httpCode) {
						json.httpCode = nodeError.httpCode;
					}
					returnData.push({ json, pairedItem: { item: itemIndex } });
					continue;
				}
				throw nodeError;
			}
		}
		return [returnData];
	}
}
