// Which Python runs the server. Pure: no `vscode` import, so mocha tests it in plain Node.
import * as path from 'path';

export interface VariableContext {
    workspaceFolder?: string;
    userHome: string;
    env: Record<string, string | undefined>;
}

/** Expands the variables VS Code users write in path settings: ${workspaceFolder}, ${userHome}, ${env:X}, ~. */
export function resolveVariables(value: string, ctx: VariableContext): string {
    let out = value.trim();
    if (out === '~' || out.startsWith('~/')) {
        out = ctx.userHome + out.slice(1);
    }
    out = out.replace(/\$\{userHome\}/g, ctx.userHome);
    out = out.replace(/\$\{env:([^}]+)\}/g, (_m, name: string) => ctx.env[name] ?? '');
    if (ctx.workspaceFolder !== undefined) {
        out = out.replace(/\$\{workspaceFolder\}/g, ctx.workspaceFolder);
    }
    return out;
}

export type InterpreterSource = 'setting' | 'python-extension';

export type InterpreterChoice =
    | { kind: 'found'; path: string; source: InterpreterSource }
    | { kind: 'unresolved'; setting: string } // the setting uses ${workspaceFolder} with no folder open
    | { kind: 'none'; pythonExtensionInstalled: boolean };

export interface InterpreterInputs {
    /** `tfperf.interpreter` as written by the user ("" when unset). */
    setting: string;
    /** The Python extension's active environment, when that extension is installed and has one. */
    pythonExtensionPath?: string;
    pythonExtensionInstalled: boolean;
    vars: VariableContext;
}

/** The tfperf.interpreter setting wins; else the Python extension's active environment (Microsoft's tool-extension convention). */
export function chooseInterpreter(inputs: InterpreterInputs): InterpreterChoice {
    const setting = inputs.setting.trim();
    if (setting !== '') {
        const resolved = resolveVariables(setting, inputs.vars);
        if (resolved.includes('${')) {
            return { kind: 'unresolved', setting };
        }
        // A relative path means relative to the workspace, not to VS Code's own working directory.
        const absolute = path.isAbsolute(resolved) || inputs.vars.workspaceFolder === undefined || !resolved.includes(path.sep)
            ? resolved
            : path.join(inputs.vars.workspaceFolder, resolved);
        return { kind: 'found', path: absolute, source: 'setting' };
    }
    const fromExtension = inputs.pythonExtensionPath?.trim();
    if (fromExtension) {
        return { kind: 'found', path: fromExtension, source: 'python-extension' };
    }
    return { kind: 'none', pythonExtensionInstalled: inputs.pythonExtensionInstalled };
}

/** True when `file` lies inside one of `folders` (a workspace-local venv, for instance). */
export function isInsideAny(file: string, folders: readonly string[]): boolean {
    const target = path.resolve(file);
    return folders.some((folder) => {
        const rel = path.relative(path.resolve(folder), target);
        return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
    });
}
