import * as assert from 'assert';
import { ACTION_LABELS, explainPipFailure, notices, shouldNotify } from '../../src/core/notices';

describe('notices', () => {
    it('offers "Select Interpreter" only when the Python extension is installed', () => {
        assert.deepStrictEqual(notices.noInterpreter(true).actions, ['selectInterpreter', 'openSettings']);
        assert.deepStrictEqual(notices.noInterpreter(false).actions, ['openSettings']);
        assert.match(notices.noInterpreter(false).text, /install the Python extension/);
    });

    it('gives every action a button label', () => {
        for (const make of [() => notices.crashLoop(4, 3), () => notices.needsInstall('/p', ['pygls'], true, true), () => notices.untrustedInterpreter('/p')]) {
            for (const action of make().actions) {
                assert.ok(ACTION_LABELS[action].length > 0);
            }
        }
    });

    it('uses singular grammar for one missing package', () => {
        assert.match(notices.needsInstall('/p', ['pygls'], true, true).text, /needs pygls, which is missing/);
    });

    it('the crash-loop message says the server stays stopped and offers the log', () => {
        const n = notices.crashLoop(4, 3);
        assert.match(n.text, /4 times in 3 minutes, so it will not be restarted/);
        assert.deepStrictEqual(n.actions, ['showLog', 'restart']);
    });
});

describe('tfperf.showNotifications', () => {
    it('pops up what the level allows, and everything when unset or unknown', () => {
        assert.deepStrictEqual(['error', 'warning', 'info'].map((s) => shouldNotify('off', s as 'error')), [false, false, false]);
        assert.deepStrictEqual(['error', 'warning', 'info'].map((s) => shouldNotify('onError', s as 'error')), [true, false, false]);
        assert.deepStrictEqual(['error', 'warning', 'info'].map((s) => shouldNotify('onWarning', s as 'error')), [true, true, false]);
        assert.deepStrictEqual(['error', 'warning', 'info'].map((s) => shouldNotify('always', s as 'error')), [true, true, true]);
        assert.strictEqual(shouldNotify(undefined, 'info'), true);
        assert.strictEqual(shouldNotify('loud', 'info'), true);
    });
});

describe('explainPipFailure', () => {
    const py = '/env/bin/python';
    it('names the fix for each common pip failure', () => {
        assert.match(explainPipFailure(py, '/env/bin/python: No module named pip'), /has no pip.*ensurepip/);
        assert.match(explainPipFailure(py, 'error: externally-managed-environment\n...'), /virtual environment/);
        assert.match(explainPipFailure(py, "ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied: '/usr/lib'"), /No permission/);
        assert.match(explainPipFailure(py, 'ERROR: Could not find a version that satisfies the requirement pygls==2.1.1'), /could not download/);
    });

    it('falls back to pointing at the log', () => {
        assert.match(explainPipFailure(py, 'something else'), /The log has pip's output/);
    });
});
