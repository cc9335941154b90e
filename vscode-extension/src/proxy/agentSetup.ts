// What each agent needs to go through the proxy at `url`, named as the agents name their settings.
// Pure.

export interface AgentSetup {
  /** Who it is for. */
  agent: string;
  /** Where it goes. */
  where: string;
  /** What is copied. */
  value: string;
}

export function agentSetups(url: string): AgentSetup[] {
  const base = url.replace(/\/+$/, '');
  return [
    { agent: 'Claude Code', where: 'in the shell that runs `claude` (terminals opened now already have it)', value: `export ANTHROPIC_BASE_URL=${base}` },
    { agent: 'Cline / Roo Code (OpenAI Compatible)', where: 'Settings → API Provider "OpenAI Compatible" → Base URL', value: `${base}/v1` },
    { agent: 'Cline / Roo Code (Anthropic)', where: 'Settings → API Provider "Anthropic" → Use custom base URL', value: base },
    { agent: 'Continue (OpenAI)', where: 'config.yaml, the model with `provider: openai` → apiBase', value: `apiBase: ${base}/v1` },
    { agent: 'Continue (Anthropic)', where: 'config.yaml, the model with `provider: anthropic` → apiBase', value: `apiBase: ${base}/v1/` },
    { agent: 'OpenAI SDKs and other tools', where: 'environment', value: `export OPENAI_BASE_URL=${base}/v1` },
  ];
}

/** The variables the integrated terminals get while the proxy runs. */
export function terminalEnvironment(url: string): Record<string, string> {
  const base = url.replace(/\/+$/, '');
  return { ANTHROPIC_BASE_URL: base, OPENAI_BASE_URL: `${base}/v1` };
}

/** The upstream setting as the proxy takes it: one URL, or `NAME=URL` entries (anthropic, openai, gemini); empty: the providers' own. */
export function upstreamOption(setting: string): string | string[] | undefined {
  const parts = setting.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);
  if (parts.length === 0) return undefined;
  return parts.length === 1 ? parts[0] : parts;
}
