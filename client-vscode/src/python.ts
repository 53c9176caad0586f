// The Python extension's active environment (@vscode/python-extension), when that extension is installed.
import * as vscode from 'vscode';
import { PythonExtension } from '@vscode/python-extension';

export const PYTHON_EXTENSION_ID = 'ms-python.python';

export function pythonExtensionInstalled(): boolean {
    return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}

async function api(): Promise<PythonExtension | undefined> {
    if (!pythonExtensionInstalled()) {
        return undefined;
    }
    try {
        return await PythonExtension.api();
    } catch {
        return undefined; // the extension failed to activate; behave as if it were absent
    }
}

/** The executable of the active environment for `resource`, resolved (not just "python"). */
export async function activeInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
    const python = await api();
    if (python === undefined) {
        return undefined;
    }
    const active = python.environments.getActiveEnvironmentPath(resource);
    const env = await python.environments.resolveEnvironment(active);
    return env?.executable.uri?.fsPath ?? (active.path || undefined);
}

/** Fires when the user selects another interpreter in the Python extension. */
export async function onActiveInterpreterChanged(listener: () => void): Promise<vscode.Disposable> {
    const python = await api();
    if (python === undefined) {
        return new vscode.Disposable(() => undefined);
    }
    return python.environments.onDidChangeActiveEnvironmentPath(() => listener());
}
