import * as assert from 'assert';
import { CODE_RUNNING_COMMANDS, benchmarkBlocked, interpreterBlocked } from '../../src/core/trust';

describe('benchmarkBlocked', () => {
    it('allows benchmarks in a trusted workspace', () => {
        assert.strictEqual(benchmarkBlocked(true), undefined);
    });

    it('blocks them in Restricted Mode with an explanation and a way to trust', () => {
        const notice = benchmarkBlocked(false);
        assert.ok(notice);
        assert.match(notice.text, /Benchmarks run your code/);
        assert.match(notice.text, /Hints and quick fixes keep working/);
        assert.deepStrictEqual(notice.actions, ['manageTrust']);
    });
});

describe('interpreterBlocked', () => {
    it('refuses to run an interpreter that lives inside an untrusted folder', () => {
        const notice = interpreterBlocked(false, '/ws/evil/.venv/bin/python', ['/ws/evil']);
        assert.strictEqual(notice?.id, 'untrustedInterpreter');
    });

    it('runs an interpreter outside the folder even when untrusted (hints must work)', () => {
        assert.strictEqual(interpreterBlocked(false, '/usr/bin/python3', ['/ws/evil']), undefined);
    });

    it('runs anything once the folder is trusted', () => {
        assert.strictEqual(interpreterBlocked(true, '/ws/evil/.venv/bin/python', ['/ws/evil']), undefined);
    });
});

describe('CODE_RUNNING_COMMANDS', () => {
    it('covers the server commands that run user code and not the harmless ones', () => {
        assert.ok(CODE_RUNNING_COMMANDS.has('tfperf.benchmark'));
        assert.ok(CODE_RUNNING_COMMANDS.has('tfperf.benchmarkFile'));
        assert.ok(CODE_RUNNING_COMMANDS.has('tfperf.observe'));
        assert.ok(CODE_RUNNING_COMMANDS.has('tfperf.probeDevice')); // starts the worker: runs code
        assert.ok(!CODE_RUNNING_COMMANDS.has('tfperf.showRuleDocs'));
        assert.ok(!CODE_RUNNING_COMMANDS.has('tfperf.clearBenchmarks'));
    });
});
