/**
 * The console's shell: the sign-in pages for people signed out, else the navigation, the
 * organization switcher and the page the location names.
 */
import { effect } from "@preact/signals";
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, must } from "./api/client.ts";
import { match, navigate, route } from "./lib/router.ts";
import { resumeSession, session, signOut } from "./lib/session.ts";
import { waitingCount, watchWaiting } from "./lib/waiting.ts";
import {
  isOperator,
  me,
  organizationId,
  organizationName,
  role,
  selectOrganization,
  settle,
} from "./lib/workspace.ts";
import { AnalyticsPage } from "./pages/analytics.tsx";
import { ApiSettingsPage } from "./pages/api-settings.tsx";
import { ChatbotPage, ChatbotsPage, NewChatbotPage } from "./pages/chatbots.tsx";
import { ContactDetailPage, ContactsPage } from "./pages/contacts.tsx";
import { ConversationPage, ConversationsPage } from "./pages/conversations.tsx";
import { InboxPage } from "./pages/inbox.tsx";
import { MembersPage } from "./pages/members.tsx";
import { OrganizationsPage } from "./pages/organizations.tsx";
import { OverviewPage } from "./pages/overview.tsx";
import { ForgotPasswordPage, NewPasswordPage, SignInCodePage, SignInPage } from "./pages/sign-in.tsx";
import { ToolsPage } from "./pages/tools.tsx";
import { WebhookEndpointPage, WebhooksPage } from "./pages/webhooks.tsx";
import { ErrorNotice, Loading, pageTitle } from "./ui/kit.tsx";
import { Link, Logo } from "./ui/nav.tsx";

const publicPages: Record<string, () => ComponentChildren> = {
  "/sign-in": () => <SignInPage />,
  "/new-password": () => <NewPasswordPage />,
  "/sign-in-code": () => <SignInCodePage />,
  "/forgot-password": () => <ForgotPasswordPage />,
};

type Page = { pattern: string; render: (params: Record<string, string>) => ComponentChildren };

const pages: Page[] = [
  { pattern: "/", render: () => <OverviewPage /> },
  { pattern: "/analytics", render: () => <AnalyticsPage /> },
  { pattern: "/settings/api", render: () => <ApiSettingsPage /> },
  { pattern: "/chatbots", render: () => <ChatbotsPage /> },
  { pattern: "/chatbots/new", render: () => <NewChatbotPage /> },
  { pattern: "/chatbots/:id", render: ({ id = "" }) => <ChatbotPage chatbotId={id} tab="settings" /> },
  {
    pattern: "/chatbots/:id/knowledge",
    render: ({ id = "" }) => <ChatbotPage chatbotId={id} tab="knowledge" />,
  },
  { pattern: "/chatbots/:id/tools", render: ({ id = "" }) => <ChatbotPage chatbotId={id} tab="tools" /> },
  { pattern: "/chatbots/:id/try", render: ({ id = "" }) => <ChatbotPage chatbotId={id} tab="try" /> },
  { pattern: "/chatbots/:id/widget", render: ({ id = "" }) => <ChatbotPage chatbotId={id} tab="widget" /> },
  { pattern: "/tools", render: () => <ToolsPage /> },
  { pattern: "/conversations", render: () => <ConversationsPage /> },
  { pattern: "/inbox", render: () => <InboxPage /> },
  // Where the Inbox was before it had its own entry: old links and bookmarks still open it.
  { pattern: "/conversations/inbox", render: () => <Redirect to={`/inbox${route.value.search}`} /> },
  { pattern: "/conversations/:id", render: ({ id = "" }) => <ConversationPage conversationId={id} /> },
  { pattern: "/webhooks", render: () => <WebhooksPage /> },
  { pattern: "/webhooks/:id", render: ({ id = "" }) => <WebhookEndpointPage endpointId={id} /> },
  { pattern: "/contacts", render: () => <ContactsPage /> },
  { pattern: "/contacts/:id", render: ({ id = "" }) => <ContactDetailPage contactId={id} /> },
  { pattern: "/members", render: () => <MembersPage /> },
  { pattern: "/organizations", render: () => <OrganizationsPage /> },
];

/**
 * The main navigation, in order. `prefix`: also the current entry for the pages under it; `count`:
 * a number shown beside it (empty: none), and what it counts, for screen readers.
 */
interface NavEntry {
  href: string;
  label: string;
  prefix?: boolean;
  count?: { value: () => string; means: string };
}
const mainNavigation: NavEntry[] = [
  { href: "/", label: "Overview" },
  { href: "/analytics", label: "Analytics" },
  {
    href: "/inbox",
    label: "Inbox",
    count: { value: () => (waitingCount.value === "0" ? "" : waitingCount.value), means: "waiting" },
  },
  { href: "/conversations", label: "Conversations", prefix: true },
  { href: "/contacts", label: "Contacts", prefix: true },
  { href: "/chatbots", label: "Chatbots", prefix: true },
  { href: "/tools", label: "Tools" },
  { href: "/webhooks", label: "Webhooks", prefix: true },
  { href: "/members", label: "Members" },
  { href: "/settings/api", label: "Settings → API" },
];

// The browser tab: the page, after the number of people waiting for a person, if any.
effect(() => {
  const count = session.value ? waitingCount.value : "";
  const prefix = count && count !== "0" ? `(${count}) ` : "";
  document.title = pageTitle.value ? `${prefix}${pageTitle.value} · Chatbot console` : "Chatbot console";
});

export function App() {
  const [resumed, setResumed] = useState(false);
  useEffect(() => {
    resumeSession().finally(() => setResumed(true));
  }, []);
  const { pathname } = route.value;
  if (!resumed) return <Loading label="Opening the console…" />;
  const publicPage = publicPages[pathname];
  if (!session.value) {
    if (publicPage) return <>{publicPage()}</>;
    return <Redirect to={`/sign-in?next=${encodeURIComponent(pathname + route.value.search)}`} />;
  }
  if (publicPage) return <Redirect to="/" />;
  return <SignedIn />;
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

function SignedIn() {
  const [failure, setFailure] = useState<unknown>(null);
  const email = session.value?.email;
  useEffect(() => {
    me.value = null;
    must(api.GET("/manage/me")).then(settle, setFailure);
  }, [email]);
  if (failure) {
    return (
      <main class="auth-page">
        <ErrorNotice error={failure} retry={() => location.reload()} />
      </main>
    );
  }
  if (!me.value) return <Loading label="Loading your organizations…" />;
  const { pathname } = route.value;
  let content: ComponentChildren = <NotFound />;
  for (const page of pages) {
    const params = match(page.pattern, pathname);
    if (params) {
      content = page.render(params);
      break;
    }
  }
  if (!organizationId.value && pathname !== "/organizations") content = <NoOrganization />;
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <Sidebar />
      <main class="content" id="main" key={`${organizationId.value}`}>
        {content}
      </main>
    </div>
  );
}

function Sidebar() {
  const memberships = me.value?.memberships ?? [];
  const current = organizationId.value;
  const knownHere = memberships.some((item) => item.organization_id === current);
  // On a phone the navigation folds behind a Menu button; following a link folds it again.
  const [open, setOpen] = useState(false);
  const { pathname } = route.value;
  useEffect(() => setOpen(false), [pathname]);
  useEffect(() => (current ? watchWaiting(current) : undefined), [current]);
  const waiting = waitingCount.value && waitingCount.value !== "0" ? waitingCount.value : "";
  return (
    <aside class="sidebar">
      <div class="sidebar-top">
        <div class="brand">
          <Logo /> Chatbot console
        </div>
        <button
          type="button"
          class="menu-toggle secondary outline small"
          aria-expanded={open}
          aria-controls="sidebar-menu"
          onClick={() => setOpen(!open)}
        >
          Menu
          {waiting && (
            <span class="nav-count">
              {waiting}
              <span class="visually-hidden"> waiting</span>
            </span>
          )}
        </button>
      </div>
      <div id="sidebar-menu" class={open ? "sidebar-menu open" : "sidebar-menu"}>
        {(memberships.length > 1 || (current && !knownHere)) && (
          <div>
            <label for="organization-switcher">Organization</label>
            <select
              id="organization-switcher"
              value={current ?? ""}
              onChange={(event) => {
                const id = (event.target as HTMLSelectElement).value;
                selectOrganization(id);
                navigate("/");
              }}
            >
              {current && !knownHere && <option value={current}>{organizationName.value ?? current}</option>}
              {memberships.map((item) => (
                <option key={item.organization_id} value={item.organization_id}>
                  {item.organization_name} ({item.role})
                </option>
              ))}
            </select>
          </div>
        )}
        {memberships.length === 1 && knownHere && (
          <div>
            <span class="section">Organization</span>
            <div>{organizationName.value}</div>
          </div>
        )}
        <nav aria-label="Main">
          {current && (
            <ul>
              {mainNavigation.map((entry) => {
                const count = entry.count?.value() ?? "";
                return (
                  <li key={entry.href}>
                    <Link href={entry.href} prefix={entry.prefix === true} class="nav-link">
                      {entry.label}
                      {count && (
                        <span class="nav-count">
                          {count}
                          <span class="visually-hidden"> {entry.count?.means}</span>
                        </span>
                      )}
                    </Link>
                  </li>
                );
              })}
            </ul>
          )}
          {isOperator.value && (
            <>
              <span class="section">Platform</span>
              <ul>
                <li>
                  <Link href="/organizations">Organizations</Link>
                </li>
              </ul>
            </>
          )}
        </nav>
        <div class="account">
          <div>{session.value?.email}</div>
          {role.value && (
            <div class="stat-label">
              Role: {isOperator.value && role.value === "admin" && !knownHere ? "operator" : role.value}
            </div>
          )}
          <button
            type="button"
            class="secondary outline small"
            onClick={async () => {
              await signOut();
              navigate("/sign-in", { replace: true });
            }}
          >
            Sign out
          </button>
        </div>
      </div>
    </aside>
  );
}

function NoOrganization() {
  return (
    <section>
      <h1>No organization yet</h1>
      <p>
        Your account belongs to no organization. Ask an administrator of your organization to invite you
        (Members → Invite){isOperator.value ? ", or create one under Organizations" : ""}.
      </p>
      {isOperator.value && <Link href="/organizations">Go to Organizations</Link>}
    </section>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no page at this address. <Link href="/">Go to the overview</Link>.
      </p>
    </section>
  );
}
