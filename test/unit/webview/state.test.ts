import * as assert from 'node:assert/strict';
import { initialModel, reduce, type PanelModel } from '../../../webview/state';
import { snapshot } from './fixtures';

const snap = (model: PanelModel) => reduce(model, { type: 'message', message: { type: 'rennet/panel/snapshot', snapshot: snapshot() } });

describe('webview/state', () => {
  it('starts loading, with nothing received', () => {
    assert.equal(initialModel.received, false);
    assert.equal(initialModel.snapshot, null);
  });

  it('takes a snapshot whole', () => {
    const model = snap(initialModel);
    assert.equal(model.received, true);
    assert.equal(model.snapshot?.session.id, 'ses-1');
  });

  it('tracks a recapture until a snapshot answers it', () => {
    const asked = reduce(snap(initialModel), { type: 'refresh-requested' });
    assert.equal(asked.refreshing, true);
    assert.equal(snap(asked).refreshing, false);
  });

  it('ends a recapture with an error, which stays until dismissed', () => {
    const asked = reduce(snap(initialModel), { type: 'refresh-requested' });
    const failed = reduce(asked, { type: 'message', message: { type: 'rennet/panel/error', message: 'empty change' } });
    assert.equal(failed.refreshing, false);
    assert.equal(failed.error, 'empty change');
    // A pushed snapshot does not hide the error…
    assert.equal(snap(failed).error, 'empty change');
    // …dismissing or recapturing does.
    assert.equal(reduce(failed, { type: 'dismiss-error' }).error, null);
    assert.equal(reduce(failed, { type: 'refresh-requested' }).error, null);
  });

  it('records host status and stops waiting when the host failed', () => {
    const asked = reduce(snap(initialModel), { type: 'refresh-requested' });
    const restarting = reduce(asked, {
      type: 'message',
      message: { type: 'rennet/panel/hostStatus', status: { state: 'restarting', message: null } },
    });
    assert.equal(restarting.hostStatus?.state, 'restarting');
    assert.equal(restarting.refreshing, true);
    const failed = reduce(restarting, {
      type: 'message',
      message: { type: 'rennet/panel/hostStatus', status: { state: 'failed', message: 'gave up' } },
    });
    assert.equal(failed.refreshing, false);
  });
});
