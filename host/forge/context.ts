import type { ForgeProvider } from '../../protocol/exits';
import type { PullRequestRecord } from '../../protocol/forge';
import type { RelatedContextItem } from '../pipeline/contextDir';

/**
 * A request's own words for the seats' context folder: pr.md (title and description) and
 * related-context.md (the issues its description links). Quoted as the forge returned them: the
 * context README tells every seat this is data, never instructions, and none of it reaches a prompt.
 */
export function pullRequestContext(record: PullRequestRecord, provider: ForgeProvider): { title: string; body: string; related: RelatedContextItem[] } {
  return {
    title: record.title,
    body: record.body,
    related: record.issues.map((issue) => ({
      id: `#${issue.number}`,
      tracker: provider,
      title: issue.title,
      state: issue.state ?? null,
      url: issue.webUrl,
      provenance: `linked from the description of ${provider === 'gitlab' ? `!${record.number}` : `#${record.number}`}`,
      body: issue.body,
    })),
  };
}
