/**
 * What the management routes that act on a conversation share: who the acting person is (recorded
 * on the transition and shown on their replies), and the management format's 409 for a closed
 * conversation.
 */
import type { DomainContext } from "#functions/domain/context";
import { getMember } from "#functions/domain/people";
import { AppError } from "#functions/errors";
import type { OrganizationCaller } from "#functions/http/api-handler";
import type { TransitionActor } from "#functions/store/items";

/** The name on an agent message when the caller is a manage key that gave none. */
export const DEFAULT_AGENT_NAME = "Support team";

/**
 * The person acting: a signed-in member by their display name (else e-mail), read from their
 * membership; a manage key by the name it gives (else DEFAULT_AGENT_NAME).
 */
export async function actingAgent(
  ctx: DomainContext,
  caller: OrganizationCaller,
  givenName?: string,
): Promise<TransitionActor & { name: string }> {
  if (caller.principal.kind === "key")
    return { kind: "api_key", id: caller.principal.keyId, name: givenName ?? DEFAULT_AGENT_NAME };
  const userId = caller.principal.userId;
  try {
    const member = await getMember(ctx, { organizationId: caller.organizationId, userId });
    return { kind: "person", id: userId, name: member.displayName ?? member.email };
  } catch (error) {
    // A platform operator acting on an organization they are no member of.
    if (error instanceof AppError && error.code === "member_not_found")
      return { kind: "person", id: userId, name: givenName ?? DEFAULT_AGENT_NAME };
    throw error;
  }
}

/** Runs a status change; a closed conversation is the management API's `409 conflict`. */
export async function asManagement<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof AppError && error.code === "conversation_closed")
      throw new AppError("conflict", { detail: "Conversation is closed", details: { status: "closed" } });
    throw error;
  }
}
