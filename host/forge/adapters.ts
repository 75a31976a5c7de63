import type { ForgeRepo } from '../../protocol/forge';
import { githubAdapter } from './github';
import { gitlabAdapter } from './gitlab';
import type { ForgeAdapter } from './types';

/** The adapter for a repository's provider, with production options. */
export function forgeAdapter(repo: ForgeRepo, token: string): ForgeAdapter {
  return repo.provider === 'github' ? githubAdapter(repo, token) : gitlabAdapter(repo, token);
}
