// Reads the `tfperf.*` settings through VS Code; the mapping itself lives in core/settings.ts.
import * as vscode from 'vscode';
import { MappedSettings, toServerSettings } from './core/settings';

export function firstFolder(): vscode.WorkspaceFolder | undefined {
    return vscode.workspace.workspaceFolders?.[0];
}

/** One server serves the window; settings are read in the scope of the first folder (as Microsoft's tool extensions do). */
export function readServerSettings(resource: vscode.Uri | undefined = firstFolder()?.uri): MappedSettings {
    const config = vscode.workspace.getConfiguration('tfperf', resource);
    return toServerSettings((key) => config.get(key), vscode.workspace.isTrusted);
}

export function importStrategySetting(resource: vscode.Uri | undefined = firstFolder()?.uri): unknown {
    return vscode.workspace.getConfiguration('tfperf', resource).get('importStrategy');
}

export function interpreterSetting(resource: vscode.Uri | undefined = firstFolder()?.uri): string {
    return vscode.workspace.getConfiguration('tfperf', resource).get<string>('interpreter') ?? '';
}
