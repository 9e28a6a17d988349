/** Organizations (platform operators): create organizations, switch subscriptions, set rate limits. */
import { useState } from "preact/hooks";
import { api, must, type paths } from "../api/client.ts";
import { navigate } from "../lib/router.ts";
import { isOperator, selectOrganization } from "../lib/workspace.ts";
import {
  Badge,
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

type Organization =
  paths["/manage/organizations/{organization_id}"]["get"]["responses"][200]["content"]["application/json"];

export function OrganizationsPage() {
  if (!isOperator.value) {
    return (
      <>
        <PageHeader title="Organizations" />
        <p>Only platform operators manage organizations.</p>
      </>
    );
  }
  return <Operators />;
}

function Operators() {
  const [extra, setExtra] = useState<Organization[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [state, reload] = useLoad(async () => {
    const page = await must(api.GET("/manage/organizations", { params: { query: { limit: 50 } } }));
    setExtra([]);
    setCursor(page.next_cursor);
    return page;
  }, []);
  const create = useAction();
  const more = useAction();
  const [created, setCreated] = useState<string | null>(null);
  return (
    <>
      <PageHeader title="Organizations" intro="Every organization on this platform (operators only)." />
      <article>
        <h2>Create an organization</h2>
        <form
          class="filters"
          onSubmit={async (event) => {
            event.preventDefault();
            const form = event.currentTarget;
            const values = formValues(form);
            setCreated(null);
            await create.run(async () => {
              const made = await must(
                api.POST("/manage/organizations", {
                  body: {
                    name: (values.name ?? "").trim(),
                    rate_limit: Number(values.rate_limit || 100),
                    ...(values.admin_email?.trim() ? { admin_email: values.admin_email.trim() } : {}),
                  },
                }),
              );
              setCreated(
                `${made.organization.name} is created${made.invitation === "sent" ? `; ${values.admin_email} is invited as its admin` : ""}.`,
              );
              form.reset();
              reload();
            });
          }}
        >
          <label>
            Name
            <input name="name" required maxLength={120} />
          </label>
          <label>
            Rate limit (per minute)
            <input name="rate_limit" type="number" min={1} max={100000} defaultValue={100} />
          </label>
          <label>
            First admin's e-mail (optional)
            <input name="admin_email" type="email" />
          </label>
          <SubmitButton action={create}>Create</SubmitButton>
        </form>
        {create.error !== null && <ErrorNotice error={create.error} />}
        {created && <SuccessNotice>{created}</SuccessNotice>}
      </article>
      <article>
        <h2>All organizations</h2>
        <Loaded state={state} retry={reload}>
          {(page) => (
            <>
              <div class="overflow-auto">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Subscription</th>
                      <th scope="col">Rate limit</th>
                      <th scope="col">Created</th>
                      <th scope="col">
                        <span class="visually-hidden">Open</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {[...page.organizations, ...extra].map((organization) => (
                      <Row key={organization.organization_id} organization={organization} />
                    ))}
                  </tbody>
                </table>
              </div>
              {more.error !== null && <ErrorNotice error={more.error} />}
              {cursor && (
                <button
                  type="button"
                  class="secondary"
                  aria-busy={more.busy}
                  onClick={() =>
                    more.run(async () => {
                      const next = await must(
                        api.GET("/manage/organizations", { params: { query: { limit: 50, cursor } } }),
                      );
                      setExtra((current) => [...current, ...next.organizations]);
                      setCursor(next.next_cursor);
                    })
                  }
                >
                  Load more
                </button>
              )}
            </>
          )}
        </Loaded>
      </article>
    </>
  );
}

function Row({ organization: initial }: { organization: Organization }) {
  const [organization, setOrganization] = useState(initial);
  const action = useAction();
  const update = (body: { subscription?: "active" | "inactive"; rate_limit?: number }) =>
    action.run(async () => {
      setOrganization(
        await must(
          api.PATCH("/manage/organizations/{organization_id}", {
            params: { path: { organization_id: organization.organization_id } },
            body,
          }),
        ),
      );
    });
  const active = organization.subscription === "active";
  return (
    <tr>
      <td>
        {organization.name}
        {action.error !== null && <ErrorNotice error={action.error} />}
      </td>
      <td>
        <label>
          <input
            type="checkbox"
            role="switch"
            aria-checked={active}
            checked={active}
            disabled={action.busy}
            onChange={() => update({ subscription: active ? "inactive" : "active" })}
          />
          <Badge tone={active ? "good" : "bad"}>{active ? "Active" : "Inactive"}</Badge>
          <span class="visually-hidden"> subscription of {organization.name}</span>
        </label>
      </td>
      <td>
        <form
          class="composer"
          onSubmit={(event) => {
            event.preventDefault();
            const value = Number(formValues(event.currentTarget).rate_limit);
            void update({ rate_limit: value });
          }}
        >
          <input
            name="rate_limit"
            type="number"
            min={1}
            max={100000}
            defaultValue={organization.rate_limit}
            aria-label={`Rate limit of ${organization.name}, requests per minute`}
          />
          <button type="submit" class="secondary small" disabled={action.busy}>
            Save<span class="visually-hidden"> rate limit of {organization.name}</span>
          </button>
        </form>
      </td>
      <td>{formatTime(organization.created_at)}</td>
      <td>
        <button
          type="button"
          class="secondary outline small"
          onClick={() => {
            selectOrganization(organization.organization_id, organization.name);
            navigate("/");
          }}
        >
          Open<span class="visually-hidden"> {organization.name}</span>
        </button>
      </td>
    </tr>
  );
}
