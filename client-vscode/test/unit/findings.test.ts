import * as assert from 'assert';
import { DiagnosticLike, findingAt, findingsIn, ruleCodes, toFinding } from '../../src/core/findings';

const range = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });
const diag = (id: string, code: string, r: ReturnType<typeof range>, benchmarkable = true): DiagnosticLike => ({
    range: r, source: 'tfperf', code: { value: code, target: 'https://docs' }, data: { id, code, fixable: true, benchmarkable },
});

describe('toFinding', () => {
    it('reads id, code and flags from a tfperf diagnostic', () => {
        assert.deepStrictEqual(toFinding(diag('f1', 'TFP101', range(1, 0, 1, 5))), { id: 'f1', code: 'TFP101', fixable: true, benchmarkable: true, range: range(1, 0, 1, 5) });
    });

    it("ignores other tools' diagnostics and tfperf diagnostics without data", () => {
        assert.strictEqual(toFinding({ range: range(0, 0, 0, 1), source: 'Pylance', data: { id: 'x' } }), undefined);
        assert.strictEqual(toFinding({ range: range(0, 0, 0, 1), source: 'tfperf' }), undefined);
    });

    it('takes the code from the diagnostic when data lacks it', () => {
        const f = toFinding({ range: range(0, 0, 0, 1), source: 'tfperf', code: 'TFP7', data: { id: 'a' } });
        assert.strictEqual(f?.code, 'TFP7');
        assert.strictEqual(f?.benchmarkable, false);
    });
});

describe('findingAt', () => {
    const findings = findingsIn([
        diag('wide', 'TFP1', range(2, 0, 6, 0)),
        diag('narrow', 'TFP2', range(3, 4, 3, 10)),
        diag('plain', 'TFP3', range(8, 8, 8, 12), false),
    ]);

    it('prefers the smallest finding containing the cursor', () => {
        assert.strictEqual(findingAt(findings, { line: 3, character: 5 })?.id, 'narrow');
        assert.strictEqual(findingAt(findings, { line: 5, character: 0 })?.id, 'wide');
    });

    it('accepts a cursor elsewhere on the finding line', () => {
        assert.strictEqual(findingAt(findings, { line: 8, character: 0 })?.id, 'plain');
    });

    it('applies the predicate (only benchmarkable findings)', () => {
        assert.strictEqual(findingAt(findings, { line: 8, character: 9 }, (f) => f.benchmarkable), undefined);
    });

    it('returns undefined away from every finding', () => {
        assert.strictEqual(findingAt(findings, { line: 20, character: 0 }), undefined);
    });
});

describe('ruleCodes', () => {
    it('lists distinct codes in order', () => {
        const f = findingsIn([diag('a', 'TFP2', range(0, 0, 0, 1)), diag('b', 'TFP1', range(1, 0, 1, 1)), diag('c', 'TFP2', range(2, 0, 2, 1))]);
        assert.deepStrictEqual(ruleCodes(f), ['TFP2', 'TFP1']);
    });
});
