/** The knowledge sources a reply drew on, under the reply (Try it, transcripts, the Inbox). */

export interface ReplySource {
  source_id: string;
  title: string;
  url: string | null;
}

export function Sources({ sources }: { sources: readonly ReplySource[] | undefined }) {
  if (!sources || sources.length === 0) return null;
  return (
    <span class="sources">
      <span class="sources-label">Sources:</span>
      {sources.map((source) =>
        source.url ? (
          <a key={source.source_id} href={source.url} target="_blank" rel="noreferrer noopener">
            {source.title}
          </a>
        ) : (
          <span key={source.source_id} class="source">
            {source.title}
          </span>
        ),
      )}
    </span>
  );
}
