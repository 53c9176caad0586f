import * as assert from 'assert';
import { parseBenchmarkResult, resultMessage, resultSeverity } from '../../src/core/results';

const base = { uri: 'file:///w/a.py', findingId: 'f1', code: 'TFP101', verdict: 'faster', summary: '3.2x faster (12.0 ms -> 3.7 ms)' };

describe('benchmark results', () => {
    it('parses the notification and rejects malformed ones', () => {
        assert.deepStrictEqual(parseBenchmarkResult(base), base);
        assert.strictEqual(parseBenchmarkResult({ uri: 'x' }), undefined);
    });

    it('does not repeat the verdict when the summary already says it', () => {
        assert.strictEqual(resultMessage(base, 'a.py'), 'tfperf TFP101 (a.py): 3.2x faster (12.0 ms -> 3.7 ms)');
    });

    it('prefixes the verdict when the summary lacks it', () => {
        assert.strictEqual(resultMessage({ ...base, verdict: 'no-gain', summary: '1.01x (noise)' }, 'a.py'), 'tfperf TFP101 (a.py): no-gain. 1.01x (noise)');
    });

    it('warns on errors and timeouts', () => {
        assert.strictEqual(resultSeverity({ ...base, verdict: 'error' }), 'warning');
        assert.strictEqual(resultSeverity({ ...base, verdict: 'timeout' }), 'warning');
        assert.strictEqual(resultSeverity(base), 'info');
    });
});
