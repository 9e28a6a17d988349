/** Members: who may use the console for this organization, and with which role. */

import { useState } from "preact/hooks";
import { api, must } from "../api/client.ts";
import { canWrite, me, organizationId } from "../lib/workspace.ts";
import {
  Badge,
  ConfirmButton,
  ErrorNotice,
  formatTime,
  formValues,
  Loaded,
  PageHeader,
  SubmitButton,
  SuccessNotice,
  useAction,
  useLoad,
} from "../ui/kit.tsx";

export function MembersPage() {
  const [state, reload] = useLoad(() => must(api.GET("/manage/members")), [organizationId.value]);
  const invite = useAction();
  const change = useAction();
  const [invited, setInvited] = useState<string | null>(null);
  const self = me.value?.principal.type === "user" ? me.value.principal.user_id : null;
  return (
    <>
      <PageHeader title="Members" intro="Admins change everything; viewers read." />
      {canWrite.value && (
        <article>
          <h2>Invite someone</h2>
          <form
            class="filters"
            onSubmit={async (event) => {
              event.preventDefault();
              const form = event.currentTarget;
              const { email = "", role = "viewer", display_name: displayName = "" } = formValues(form);
              setInvited(null);
              await invite.run(async () => {
                const added = await must(
                  api.POST("/manage/members", {
                    body: {
                      email: email.trim(),
                      role: role === "admin" ? "admin" : "viewer",
                      ...(displayName.trim() ? { display_name: displayName.trim() } : {}),
                    },
                  }),
                );
                setInvited(
                  added.invitation === "sent"
                    ? `${added.email} is invited: they get an e-mail with a temporary password.`
                    : `${added.email} already has an account and can now open this organization.`,
                );
                form.reset();
                reload();
              });
            }}
          >
            <label>
              E-mail address
              <input name="email" type="email" required />
            </label>
            <label>
              Name (optional)
              <input name="display_name" maxLength={120} />
            </label>
            <div>
              <label for="invite-role">Role</label>
              <select name="role" id="invite-role">
                <option value="viewer">Viewer</option>
                <option value="admin">Admin</option>
              </select>
            </div>
            <SubmitButton action={invite}>Invite</SubmitButton>
          </form>
          {invite.error !== null && <ErrorNotice error={invite.error} />}
          {invited && <SuccessNotice>{invited}</SuccessNotice>}
        </article>
      )}
      <article>
        <h2>People</h2>
        {change.error !== null && <ErrorNotice error={change.error} />}
        <Loaded state={state} retry={reload}>
          {({ members }) => (
            <div class="overflow-auto">
              <table>
                <thead>
                  <tr>
                    <th scope="col">E-mail</th>
                    <th scope="col">Name</th>
                    <th scope="col">Role</th>
                    <th scope="col">Member since</th>
                    {canWrite.value && (
                      <th scope="col">
                        <span class="visually-hidden">Actions</span>
                      </th>
                    )}
                  </tr>
                </thead>
                <tbody>
                  {members.map((member) => (
                    <tr key={member.user_id}>
                      <td>
                        {member.email}
                        {member.user_id === self && (
                          <>
                            {" "}
                            <Badge tone="muted">you</Badge>
                          </>
                        )}
                      </td>
                      <td>{member.display_name ?? "—"}</td>
                      <td>
                        {canWrite.value ? (
                          <select
                            class="role-select"
                            aria-label={`Role of ${member.email}`}
                            value={member.role}
                            disabled={change.busy}
                            onChange={(event) => {
                              const role =
                                (event.target as HTMLSelectElement).value === "admin" ? "admin" : "viewer";
                              void change.run(async () => {
                                try {
                                  await must(
                                    api.PATCH("/manage/members/{user_id}", {
                                      params: { path: { user_id: member.user_id } },
                                      body: { role },
                                    }),
                                  );
                                } finally {
                                  reload();
                                }
                              });
                            }}
                          >
                            <option value="admin">Admin</option>
                            <option value="viewer">Viewer</option>
                          </select>
                        ) : (
                          <Badge tone={member.role === "admin" ? "info" : "muted"}>{member.role}</Badge>
                        )}
                      </td>
                      <td>{formatTime(member.created_at)}</td>
                      {canWrite.value && (
                        <td>
                          <ConfirmButton
                            label="Remove"
                            labelDetail={member.email}
                            question={`Remove ${member.email} from the organization?`}
                            detail="They lose access at once; their account stays for their other organizations."
                            confirmLabel="Remove"
                            onConfirm={async () => {
                              await must(
                                api.DELETE("/manage/members/{user_id}", {
                                  params: { path: { user_id: member.user_id } },
                                }),
                              );
                              reload();
                            }}
                          />
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Loaded>
      </article>
    </>
  );
}
