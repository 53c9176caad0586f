import * as assert from 'assert';
import { chooseInterpreter, isInsideAny, resolveVariables } from '../../src/core/interpreter';

const vars = { workspaceFolder: '/ws/proj', userHome: '/home/ana', env: { CONDA_PREFIX: '/opt/conda/envs/tf' } };

describe('resolveVariables', () => {
    it('expands ${workspaceFolder}, ${userHome}, ${env:X} and a leading ~', () => {
        assert.strictEqual(resolveVariables('${workspaceFolder}/.venv/bin/python', vars), '/ws/proj/.venv/bin/python');
        assert.strictEqual(resolveVariables('${userHome}/py/bin/python', vars), '/home/ana/py/bin/python');
        assert.strictEqual(resolveVariables('${env:CONDA_PREFIX}/bin/python', vars), '/opt/conda/envs/tf/bin/python');
        assert.strictEqual(resolveVariables('~/venvs/tf/bin/python', vars), '/home/ana/venvs/tf/bin/python');
    });

    it('leaves ${workspaceFolder} alone when no folder is open, and an unknown env var becomes empty', () => {
        const noFolder = { ...vars, workspaceFolder: undefined };
        assert.strictEqual(resolveVariables('${workspaceFolder}/x', noFolder), '${workspaceFolder}/x');
        assert.strictEqual(resolveVariables('${env:NOPE}/python', vars), '/python');
    });
});

describe('chooseInterpreter', () => {
    it('prefers the tfperf.interpreter setting over the Python extension', () => {
        const choice = chooseInterpreter({ setting: '/usr/bin/python3.11', pythonExtensionPath: '/ws/proj/.venv/bin/python', pythonExtensionInstalled: true, vars });
        assert.deepStrictEqual(choice, { kind: 'found', path: '/usr/bin/python3.11', source: 'setting' });
    });

    it("falls back to the Python extension's active environment when the setting is empty or blank", () => {
        const choice = chooseInterpreter({ setting: '  ', pythonExtensionPath: '/ws/proj/.venv/bin/python', pythonExtensionInstalled: true, vars });
        assert.deepStrictEqual(choice, { kind: 'found', path: '/ws/proj/.venv/bin/python', source: 'python-extension' });
    });

    it('reports none, saying whether the Python extension exists, when neither gives a path', () => {
        assert.deepStrictEqual(chooseInterpreter({ setting: '', pythonExtensionPath: undefined, pythonExtensionInstalled: false, vars }),
            { kind: 'none', pythonExtensionInstalled: false });
        assert.deepStrictEqual(chooseInterpreter({ setting: '', pythonExtensionPath: '', pythonExtensionInstalled: true, vars }),
            { kind: 'none', pythonExtensionInstalled: true });
    });

    it('resolves a relative setting against the workspace folder but keeps a bare command for PATH lookup', () => {
        assert.strictEqual((chooseInterpreter({ setting: '.venv/bin/python', pythonExtensionInstalled: false, vars }) as { path: string }).path, '/ws/proj/.venv/bin/python');
        assert.strictEqual((chooseInterpreter({ setting: 'python3', pythonExtensionInstalled: false, vars }) as { path: string }).path, 'python3');
    });

    it('reports an unresolved ${workspaceFolder} instead of running a literal "${workspaceFolder}/..." path', () => {
        const choice = chooseInterpreter({ setting: '${workspaceFolder}/.venv/bin/python', pythonExtensionInstalled: true, vars: { ...vars, workspaceFolder: undefined } });
        assert.deepStrictEqual(choice, { kind: 'unresolved', setting: '${workspaceFolder}/.venv/bin/python' });
    });
});

describe('isInsideAny', () => {
    it('is true only for paths strictly inside one of the folders', () => {
        assert.strictEqual(isInsideAny('/ws/proj/.venv/bin/python', ['/other', '/ws/proj']), true);
        assert.strictEqual(isInsideAny('/ws/project2/bin/python', ['/ws/proj']), false); // prefix, not a parent
        assert.strictEqual(isInsideAny('/ws/proj/../x/python', ['/ws/proj']), false);
        assert.strictEqual(isInsideAny('/usr/bin/python3', []), false);
    });
});
