/**
 * The organization the console acts on and the caller's standing in it, from `GET /manage/me`:
 * the organization switcher sets `organizationId` (remembered per browser), roles decide which
 * controls show. Operators may act on any organization as its admin.
 */
import { computed, signal } from "@preact/signals";
import type { paths } from "../api/schema";

export type Me = paths["/manage/me"]["get"]["responses"][200]["content"]["application/json"];
export type Role = "admin" | "viewer";

const ORGANIZATION_KEY = "console.organization";

export const me = signal<Me | null>(null);
export const organizationId = signal<string | null>(localStorage.getItem(ORGANIZATION_KEY));
/** A name for an organization an operator opened from the Organizations page. */
export const visitedOrganization = signal<{ id: string; name: string } | null>(null);

export const isOperator = computed(() => me.value?.operator === true);

export const membership = computed(() =>
  me.value?.memberships.find((candidate) => candidate.organization_id === organizationId.value),
);

/** The role acted with: the membership's, or admin for an operator. */
export const role = computed<Role | null>(() => {
  const found = membership.value;
  if (found) return found.role === "admin" ? "admin" : "viewer";
  return isOperator.value && organizationId.value ? "admin" : null;
});

export const canWrite = computed(() => role.value === "admin");

export const organizationName = computed(() => {
  const found = membership.value;
  if (found) return found.organization_name;
  const visited = visitedOrganization.value;
  return visited && visited.id === organizationId.value ? visited.name : null;
});

export function selectOrganization(id: string | null, name?: string): void {
  organizationId.value = id;
  if (id && name) visitedOrganization.value = { id, name };
  if (id) localStorage.setItem(ORGANIZATION_KEY, id);
  else localStorage.removeItem(ORGANIZATION_KEY);
}

/** After `GET /manage/me`: keep the remembered organization if still allowed, else the first. */
export function settle(found: Me): void {
  me.value = found;
  const ids = found.memberships.map((item) => item.organization_id);
  const remembered = organizationId.value;
  if (remembered && (ids.includes(remembered) || found.operator)) return;
  selectOrganization(ids[0] ?? null);
}
