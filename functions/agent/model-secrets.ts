/** Model API keys in Secrets Manager: loaded only when an OpenAI-compatible chatbot needs its key. */
import { GetSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { awsClientOptions } from "#functions/aws-clients";

let client: SecretsManagerClient | undefined;

export async function readSecretString(secretId: string): Promise<string> {
  client ??= new SecretsManagerClient(awsClientOptions("keys"));
  const secret = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
  if (!secret.SecretString) throw new Error(`model secret ${secretId} has no string value`);
  return secret.SecretString.trim();
}
