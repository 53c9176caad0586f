import * as assert from 'assert';
import { EnvReport, noticeForStartFailure, parseEnvReport, planFromProbe, planFromReport } from '../../src/core/envCheck';

const ok: EnvReport = {
    python: '3.11.7', python_ok: true, executable: '/env/bin/python', tfperf: '0.1.0', tfperf_source: 'environment',
    missing: [], tensorflow: '2.21.0', keras: '3.15.1',
};
const ctx = { interpreter: '/env/bin/python', pythonExtensionInstalled: true, canInstall: true };

describe('parseEnvReport', () => {
    it('reads the JSON line even after noise printed by a sitecustomize', () => {
        const report = parseEnvReport(`hello from sitecustomize\n${JSON.stringify(ok)}\n`);
        assert.deepStrictEqual(report, ok);
    });

    it('returns undefined for output that is not check_env JSON', () => {
        assert.strictEqual(parseEnvReport('Python 3.11.7\n'), undefined);
        assert.strictEqual(parseEnvReport('{"foo": 1}'), undefined);
        assert.strictEqual(parseEnvReport('{broken'), undefined);
    });
});

describe('planFromReport', () => {
    it('starts silently when everything is there', () => {
        assert.deepStrictEqual(planFromReport(ok, ctx), { start: true, report: ok, notices: [] });
    });

    it('does not start on an old Python and says which version it found', () => {
        const plan = planFromReport({ ...ok, python: '3.9.18', python_ok: false }, ctx);
        assert.strictEqual(plan.start, false);
        assert.strictEqual(plan.notices[0].id, 'pythonTooOld');
        assert.match(plan.notices[0].text, /needs Python 3\.10 or newer, but \/env\/bin\/python is Python 3\.9\.18/);
        assert.deepStrictEqual(plan.notices[0].actions, ['selectInterpreter', 'openSettings']);
    });

    it('offers the install button when server dependencies are missing', () => {
        const plan = planFromReport({ ...ok, missing: ['pygls', 'libcst'] }, ctx);
        assert.strictEqual(plan.start, false);
        assert.strictEqual(plan.notices[0].id, 'needsInstall');
        assert.match(plan.notices[0].text, /needs pygls, libcst, which are missing from \/env\/bin\/python/);
        assert.deepStrictEqual(plan.notices[0].actions, ['installTfperf', 'selectInterpreter', 'showLog']);
    });

    it('offers Open Settings instead of Select Interpreter without the Python extension', () => {
        const plan = planFromReport({ ...ok, missing: ['pygls'] }, { ...ctx, pythonExtensionInstalled: false });
        assert.deepStrictEqual(plan.notices[0].actions, ['installTfperf', 'openSettings', 'showLog']);
        assert.deepStrictEqual(planFromReport({ ...ok, tensorflow: null }, { ...ctx, pythonExtensionInstalled: false }).notices[0].actions, ['openSettings', 'dontShowAgain']);
    });

    it('offers the install button when tfperf itself is absent', () => {
        const plan = planFromReport({ ...ok, tfperf: null, tfperf_source: null }, ctx);
        assert.strictEqual(plan.start, false);
        assert.match(plan.notices[0].text, /^tfperf is not installed in \/env\/bin\/python\./);
    });

    it('without a bundled wheel, tells the pip command instead of offering a button that cannot work', () => {
        const plan = planFromReport({ ...ok, tfperf: null }, { ...ctx, canInstall: false });
        assert.ok(!plan.notices[0].actions.includes('installTfperf'));
        assert.match(plan.notices[0].text, /\/env\/bin\/python -m pip install tfperf/);
    });

    it('starts without TensorFlow, explaining that hints work and benchmarks do not', () => {
        const plan = planFromReport({ ...ok, tensorflow: null }, ctx);
        assert.strictEqual(plan.start, true);
        assert.strictEqual(plan.notices[0].id, 'noTensorflow');
        assert.strictEqual(plan.notices[0].severity, 'info');
        assert.match(plan.notices[0].text, /hints and quick fixes work, benchmarks are unavailable/);
    });

    it('reports the old Python before missing packages (installing would not help)', () => {
        const plan = planFromReport({ ...ok, python_ok: false, python: '3.8.10', missing: ['pygls'], tensorflow: null }, ctx);
        assert.deepStrictEqual(plan.notices.map((n) => n.id), ['pythonTooOld']);
    });
});

describe('planFromProbe', () => {
    it('says the interpreter does not exist when spawning fails with ENOENT', () => {
        const plan = planFromProbe({ kind: 'spawnError', code: 'ENOENT', message: 'spawn /nope ENOENT' }, { ...ctx, interpreter: '/nope' });
        assert.strictEqual(plan.start, false);
        assert.strictEqual(plan.notices[0].id, 'interpreterNotFound');
        assert.match(plan.notices[0].text, /\/nope: it does not exist/);
    });

    it('recognises a Python too old to even run check_env.py', () => {
        const stderr = 'Traceback (most recent call last):\n  File "check_env.py", line 1\nModuleNotFoundError: No module named \'importlib.metadata\'\n';
        const plan = planFromProbe({ kind: 'exit', code: 1, stdout: '', stderr }, ctx);
        assert.strictEqual(plan.notices[0].id, 'pythonTooOld');
    });

    it('shows the last line of stderr for other probe crashes', () => {
        const plan = planFromProbe({ kind: 'exit', code: 1, stdout: '', stderr: 'Traceback...\nOSError: disk on fire\n' }, ctx);
        assert.strictEqual(plan.notices[0].id, 'probeFailed');
        assert.match(plan.notices[0].text, /OSError: disk on fire$/);
    });

    it('does not start on a timeout or unparsable output', () => {
        assert.strictEqual(planFromProbe({ kind: 'timeout', seconds: 30 }, ctx).start, false);
        assert.match(planFromProbe({ kind: 'timeout', seconds: 30 }, ctx).notices[0].text, /did not answer within 30 s/);
        assert.strictEqual(planFromProbe({ kind: 'ok', stdout: 'nope', stderr: '' }, ctx).start, false);
    });

    it('hands a good JSON answer to planFromReport', () => {
        const plan = planFromProbe({ kind: 'ok', stdout: JSON.stringify({ ...ok, tensorflow: null }), stderr: '' }, ctx);
        assert.strictEqual(plan.start, true);
        assert.strictEqual(plan.report?.tensorflow, null);
    });
});

describe('noticeForStartFailure', () => {
    it("offers to install tfperf when the launcher says tfperf_lsp is missing", () => {
        const n = noticeForStartFailure([
            "tfperf cannot start with /env/bin/python: No module named 'tfperf_lsp'.",
            'Install it into this environment: /env/bin/python -m pip install tfperf',
        ], ctx);
        assert.strictEqual(n.id, 'needsInstall');
        assert.match(n.text, /^tfperf is not installed in \/env\/bin\/python/);
        assert.strictEqual(n.actions[0], 'installTfperf');
    });

    it('names a missing server dependency', () => {
        const n = noticeForStartFailure(["tfperf cannot start with /env/bin/python: No module named 'pygls'."], ctx);
        assert.strictEqual(n.id, 'needsInstall');
        assert.match(n.text, /needs pygls, which is missing/);
    });

    it("reports the interpreter's version, not the required one, for an old Python", () => {
        const n = noticeForStartFailure(['tfperf needs Python 3.10 or newer; /usr/bin/python3 is Python 3.9.18.'], ctx);
        assert.strictEqual(n.id, 'pythonTooOld');
        assert.match(n.text, /is Python 3\.9\.18/);
    });

    it('quotes the last meaningful stderr line of any other crash', () => {
        const n = noticeForStartFailure(['Traceback (most recent call last):', '  File "x.py", line 1, in <module>', 'RuntimeError: port in use', ''], ctx);
        assert.strictEqual(n.id, 'startFailed');
        assert.match(n.text, /exited while starting with \/env\/bin\/python: RuntimeError: port in use$/);
        assert.deepStrictEqual(n.actions, ['showLog', 'restart']);
    });

    it('points at the log when stderr was empty', () => {
        assert.match(noticeForStartFailure([], ctx).text, /The log shows why\.$/);
    });
});
