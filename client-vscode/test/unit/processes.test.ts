// Runs real processes (sh scripts stand in for Python), so it covers the spawn/timeout plumbing.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pipInstallArgs, runCommand, runProbe } from '../../src/node/processes';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tfperf-test-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let scripts = 0;

function script(body: string): string {
    const file = path.join(tmp, `fake-python-${scripts++}`);
    fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return file;
}

describe('runProbe', () => {
    it('returns stdout of a successful run', async () => {
        const outcome = await runProbe(script('echo \'{"python_ok": true}\''), 'check_env.py');
        assert.strictEqual(outcome.kind, 'ok');
        assert.match((outcome as { stdout: string }).stdout, /python_ok/);
    });

    it('reports ENOENT for a missing interpreter instead of throwing', async () => {
        const outcome = await runProbe('/definitely/not/python', 'check_env.py');
        assert.deepStrictEqual({ kind: outcome.kind, code: (outcome as { code: string }).code }, { kind: 'spawnError', code: 'ENOENT' });
    });

    it('reports a non-zero exit with stderr', async () => {
        const outcome = await runProbe(script('echo "No module named importlib.metadata" >&2; exit 1'), 'x');
        assert.strictEqual(outcome.kind, 'exit');
        assert.match((outcome as { stderr: string }).stderr, /importlib.metadata/);
    });

    it('kills a hanging interpreter after the timeout', async () => {
        const started = Date.now();
        const outcome = await runProbe(script('exec sleep 30'), 'x', 0.5);
        assert.deepStrictEqual(outcome, { kind: 'timeout', seconds: 0.5 });
        assert.ok(Date.now() - started < 5000);
    });
});

describe('runCommand', () => {
    it('streams lines and reports success', async () => {
        const lines: string[] = [];
        const result = await runCommand(script('echo one; echo two >&2'), [], (l) => lines.push(l));
        assert.strictEqual(result.ok, true);
        assert.deepStrictEqual(lines.sort(), ['one', 'two']);
    });

    it('can be cancelled', async () => {
        const abort = new AbortController();
        const pending = runCommand(script('exec sleep 30'), [], () => undefined, abort.signal);
        setTimeout(() => abort.abort(), 100);
        const result = await pending;
        assert.deepStrictEqual({ ok: result.ok, cancelled: result.cancelled }, { ok: false, cancelled: true });
    });

    it('builds the pip command for the bundled wheel', () => {
        assert.deepStrictEqual(pipInstallArgs('/ext/bundled/tfperf-0.1.0-py3-none-any.whl'), ['-m', 'pip', 'install', '--disable-pip-version-check', '/ext/bundled/tfperf-0.1.0-py3-none-any.whl']);
    });
});
