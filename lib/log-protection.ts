/**
 * What CloudWatch Logs masks in every log group the stack creates (a data protection policy): e-mail
 * addresses, phone numbers (every country CloudWatch has a managed identifier for), private and AWS
 * secret keys, and this service's own secrets: API keys (`cbk_…`), webhook signing secrets
 * (`whsec_…`) and bearer tokens (JWTs: console access tokens, visitor tokens). The functions never
 * log these on purpose (tests search the local log); this is the net under that rule, should a
 * third-party error message carry one. Masked text shows as `****` to anyone without the
 * `logs:Unmask` permission. Scanning costs $0.12 per GB of logs (us-east-1).
 */
import { CustomDataIdentifier, DataIdentifier, DataProtectionPolicy } from "aws-cdk-lib/aws-logs";

/** Our own secrets' shapes: CloudWatch regexes (at most 200 characters each). */
export const customSecretPatterns = {
  ApiKey: "cbk_[0-9A-Za-z]{38}",
  WebhookSecret: "whsec_[0-9A-Za-z+/]{20,}={0,2}",
  BearerToken: "eyJ[0-9A-Za-z_-]{8,}\\.[0-9A-Za-z_-]{8,}\\.[0-9A-Za-z_-]{8,}",
} as const;

export function logDataProtectionPolicy(): DataProtectionPolicy {
  return new DataProtectionPolicy({
    name: "chatbot-api-log-masking",
    description: "Masks e-mail addresses, phone numbers, keys and the service's secrets in logs.",
    identifiers: [
      DataIdentifier.EMAILADDRESS,
      DataIdentifier.PHONENUMBER_US,
      DataIdentifier.PHONENUMBER_GB,
      DataIdentifier.PHONENUMBER_DE,
      DataIdentifier.PHONENUMBER_FR,
      DataIdentifier.PHONENUMBER_ES,
      DataIdentifier.PHONENUMBER_IT,
      DataIdentifier.PHONENUMBER_BR,
      DataIdentifier.AWSSECRETKEY,
      DataIdentifier.OPENSSHPRIVATEKEY,
      DataIdentifier.PGPPRIVATEKEY,
      DataIdentifier.PKCSPRIVATEKEY,
      DataIdentifier.PUTTYPRIVATEKEY,
      ...Object.entries(customSecretPatterns).map(([name, regex]) => new CustomDataIdentifier(name, regex)),
    ],
  });
}
