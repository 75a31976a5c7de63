import * as vscode from 'vscode';
import { CITATION_MARKS_KEY, CITATION_MARKS_SECTION } from '../citationMarks';
import type { Ctx } from '../ctx';
import { errorMessage } from '../../protocol/result';
import { notify } from '../ui';
import { ui } from '../uiText';

/**
 * "Rennet: Toggle Citation Marks": flips `rennet.editor.citationMarks` in the user settings; the
 * marks follow the setting at once (CitationMarks listens to it). A workspace value would override
 * the user one and make the flip invisible, so when one is set, that is the one flipped.
 */
export const toggleCitationMarks = (ctx: Ctx) => async (): Promise<boolean | undefined> => {
  const config = vscode.workspace.getConfiguration(CITATION_MARKS_SECTION);
  const next = !config.get<boolean>(CITATION_MARKS_KEY, true);
  const inspected = config.inspect<boolean>(CITATION_MARKS_KEY);
  const target = inspected?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  try {
    await config.update(CITATION_MARKS_KEY, next, target);
    return next;
  } catch (error) {
    ctx.log.warn(`Could not toggle the citation marks: ${errorMessage(error)}`);
    void notify('error', ui`Rennet could not change rennet.editor.citationMarks: ${errorMessage(error)}`);
    return undefined;
  }
};
