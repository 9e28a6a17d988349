/**
 * Chatbot → Knowledge, the answering side: "Test a question" (the passages and scores a turn with
 * that question would use, from `POST …/knowledge/search`) and the knowledge gaps (questions the
 * knowledge could not answer, from `GET …/knowledge-gaps`), each with "Add an answer", which adds
 * the question and its answer to the chatbot's knowledge.
 */
import { useState } from "preact/hooks";
import { api, must, type paths } from "../api/client.ts";
import { canWrite } from "../lib/workspace.ts";
import {
  Badge,
  Empty,
  ErrorNotice,
  formatTime,
  formValues,
  Loaded,
  SubmitButton,
  useAction,
  useLoad,
} from "../ui/kit.tsx";
import { Link } from "../ui/nav.tsx";

type SearchResult =
  paths["/manage/chatbots/{chatbot_id}/knowledge/search"]["post"]["responses"][200]["content"]["application/json"]["results"][number];

const percent = (value: number) => `${Math.round(value * 100)} %`;

export function TestQuestion({ chatbotId }: { chatbotId: string }) {
  const action = useAction();
  const [asked, setAsked] = useState<{ query: string; results: SearchResult[] } | null>(null);
  return (
    <article aria-labelledby="test-question-title">
      <h2 id="test-question-title">Test a question</h2>
      <p class="intro">
        Ask as a visitor would: these are the passages a reply would be built from, best first. A passage
        marked "answers" is one a reply cites; the scripted engine answers with the first.
      </p>
      <form
        class="inline-form"
        // A question tested here is searched, not stored: a viewer may ask it too.
        data-reads-only
        onSubmit={async (event) => {
          event.preventDefault();
          const query = (formValues(event.currentTarget).query ?? "").trim();
          if (!query) return;
          await action.run(async () => {
            const found = await must(
              api.POST("/manage/chatbots/{chatbot_id}/knowledge/search", {
                params: { path: { chatbot_id: chatbotId } },
                body: { query },
              }),
            );
            setAsked({ query, results: found.results });
          });
        }}
      >
        <label>
          A visitor's question
          <input name="query" type="search" required maxLength={2000} placeholder="Can I return a product?" />
        </label>
        <SubmitButton action={action}>Test</SubmitButton>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
      {asked &&
        (asked.results.length === 0 ? (
          <Empty>Nothing in the knowledge matches "{asked.query}": a reply would say it does not know.</Empty>
        ) : (
          <ol class="passages" aria-label={`Passages for "${asked.query}"`}>
            {asked.results.map((result) => (
              <li key={`${result.source_id}:${result.text.slice(0, 40)}`}>
                <div class="passage-head">
                  <strong>{result.title}</strong>
                  {result.confident ? (
                    <Badge tone="good">answers</Badge>
                  ) : (
                    <Badge tone="muted">context</Badge>
                  )}
                  <span class="scores">
                    score {percent(result.score)}
                    {result.semantic_similarity !== null &&
                      ` · meaning ${percent(result.semantic_similarity)}`}
                    {result.lexical_score !== null && ` · words ${result.lexical_score.toFixed(1)}`}
                  </span>
                </div>
                <p>{result.text}</p>
                {result.url && (
                  <a href={result.url} target="_blank" rel="noreferrer noopener">
                    {result.url}
                  </a>
                )}
              </li>
            ))}
          </ol>
        ))}
    </article>
  );
}

export function KnowledgeGaps({ chatbotId, onAnswered }: { chatbotId: string; onAnswered: () => void }) {
  const [state, reload] = useLoad(
    () =>
      must(
        api.GET("/manage/chatbots/{chatbot_id}/knowledge-gaps", {
          params: { path: { chatbot_id: chatbotId } },
        }),
      ),
    [chatbotId],
  );
  const [answering, setAnswering] = useState<string | null>(null);
  return (
    <article aria-labelledby="gaps-title">
      <h2 id="gaps-title">Knowledge gaps</h2>
      <p class="intro">
        What visitors asked in the last 30 days that the knowledge could not answer, similar questions
        together, most asked first.
      </p>
      <Loaded state={state} retry={reload}>
        {({ gaps }) =>
          gaps.length === 0 ? (
            <Empty>
              No unanswered questions. Visitors' questions the knowledge cannot answer will show here.
            </Empty>
          ) : (
            <ul class="gaps">
              {gaps.map((gap) => (
                <li key={gap.question}>
                  <div class="gap-head">
                    <strong>{gap.question}</strong>
                    <Badge tone="warn">{gap.count === 1 ? "asked once" : `asked ${gap.count} times`}</Badge>
                    <small>
                      last {formatTime(gap.last_asked_at)} ·{" "}
                      <Link href={`/conversations/${gap.conversation_id}`}>conversation</Link>
                    </small>
                    {canWrite.value && answering !== gap.question && (
                      <button
                        type="button"
                        class="secondary outline small"
                        onClick={() => setAnswering(gap.question)}
                      >
                        Add an answer
                      </button>
                    )}
                  </div>
                  {answering === gap.question && (
                    <AnswerForm
                      chatbotId={chatbotId}
                      question={gap.question}
                      onCancel={() => setAnswering(null)}
                      onDone={() => {
                        setAnswering(null);
                        onAnswered();
                        reload();
                      }}
                    />
                  )}
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </article>
  );
}

/** The question (editable) and its answer, added to the chatbot's knowledge as a Q&A. */
function AnswerForm({
  chatbotId,
  question,
  onCancel,
  onDone,
}: {
  chatbotId: string;
  question: string;
  onCancel: () => void;
  onDone: () => void;
}) {
  const action = useAction();
  return (
    <form
      class="answer-form"
      onSubmit={async (event) => {
        event.preventDefault();
        const values = formValues(event.currentTarget);
        await action.run(async () => {
          await must(
            api.POST("/manage/chatbots/{chatbot_id}/knowledge", {
              params: { path: { chatbot_id: chatbotId } },
              body: {
                kind: "qa",
                question: (values.question ?? "").trim(),
                answer: (values.answer ?? "").trim(),
              },
            }),
          );
          onDone();
        });
      }}
    >
      <label>
        Question
        <input name="question" required maxLength={8000} value={question} />
      </label>
      <label>
        Answer
        <textarea name="answer" required maxLength={8000} rows={3} />
      </label>
      {action.error !== null && <ErrorNotice error={action.error} />}
      <div class="actions">
        <SubmitButton action={action}>Add to knowledge</SubmitButton>
        <button type="button" class="secondary outline" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
