//! Which agent sent a request, as the store, the log and the views name it (`Claude Code
//! 2.1.328`): its `User-Agent` product when that is the agent's own, else the opening of its
//! system prompt (several agents send a generic SDK's User-Agent, goose none at all).

/// An agent the proxy knows by name.
struct Known {
    name: &'static str,
    /// Lower-case prefixes of its `User-Agent` product name (`codex_exec/0.169.0` → `codex_`).
    products: &'static [&'static str],
    /// Words its system prompt opens with.
    prompts: &'static [&'static str],
}

const KNOWN: [Known; 10] = [
    Known { name: "Claude Code", products: &["claude-cli"], prompts: &["You are Claude Code"] },
    Known { name: "Codex", products: &["codex_"], prompts: &["You are Codex", "running in the Codex CLI"] },
    Known { name: "Gemini CLI", products: &["geminicli"], prompts: &[] },
    Known { name: "OpenCode", products: &["opencode"], prompts: &["You are opencode", "You are OpenCode"] },
    Known { name: "Qwen Code", products: &["qwencode"], prompts: &["You are Qwen Code"] },
    Known { name: "Cline", products: &["cline"], prompts: &["You are Cline"] },
    Known { name: "Continue", products: &[], prompts: &["You are an agent in the Continue CLI"] },
    Known { name: "goose", products: &["goose"], prompts: &["AI agent called goose"] },
    Known { name: "aider", products: &["aider"], prompts: &["Act as an expert software developer"] },
    Known {
        name: "mini-swe-agent",
        products: &[],
        prompts: &["You are a helpful assistant that can interact with a computer"],
    },
];

/// How much of the system prompt is looked at: where an agent introduces itself.
const OPENING_CHARS: usize = 600;

/// The agent of a request with this `User-Agent` header and system prompt: `Claude Code
/// 2.1.328`, `aider` (its version is not sent), or `unknown (OpenAI/Python)` with the header's
/// first product (`unknown` without one). The system prompt wins over the header, which another
/// agent may borrow (Qwen Code's Anthropic route sends `claude-cli/…`).
pub fn agent_name(user_agent: &str, system_text: &str) -> String {
    let product: String =
        user_agent.split_whitespace().next().unwrap_or("").chars().filter(|c| !c.is_control()).take(64).collect();
    let (product_name, version) = product.split_once('/').unwrap_or((&product, ""));
    let version = version.split('/').next().unwrap_or("");
    let lower = product_name.to_ascii_lowercase();
    let by_product = KNOWN.iter().find(|k| k.products.iter().any(|p| lower.starts_with(p)));
    let opening: String = system_text.chars().take(OPENING_CHARS).collect();
    let by_prompt = KNOWN.iter().find(|k| k.prompts.iter().any(|p| opening.contains(p)));
    match (by_prompt.or(by_product), by_product) {
        (Some(agent), Some(own)) if agent.name == own.name && !version.is_empty() => {
            format!("{} {version}", agent.name)
        }
        (Some(agent), _) => agent.name.to_owned(),
        (None, _) if product_name.is_empty() => "unknown".to_owned(),
        (None, _) => format!("unknown ({product_name})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_named_by_their_user_agent_or_their_system_prompt() {
        let cases = [
            (
                "claude-cli/2.1.328 (external, sdk-cli)",
                "x-anthropic-billing-header: …\nYou are a Claude agent",
                "Claude Code 2.1.328",
            ),
            ("codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.169.0)", "", "Codex 0.169.0"),
            ("GeminiCLI-tui/0.61.0/gemini-2.5-flash (linux; x64; terminal)", "", "Gemini CLI 0.61.0"),
            (
                "opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14",
                "You are opencode, an",
                "OpenCode 1.18.33",
            ),
            ("QwenCode/0.24.4 (linux; x64)", "You are Qwen Code, a non-interactive", "Qwen Code 0.24.4"),
            ("claude-cli/0.24.4", "You are Qwen Code, a non-interactive", "Qwen Code"),
            (
                "ai-sdk/openai-compatible/3.0.37 ai-sdk/provider-utils/5.0.30",
                "You are Cline, an AI coding agent.",
                "Cline",
            ),
            ("ls/JS 5.23.2", "You are an agent in the Continue CLI. Given", "Continue"),
            ("", "You are a general-purpose AI agent called goose, created by AAIF", "goose"),
            ("OpenAI/Python 2.20.0", "Act as an expert software developer.\nTake requests", "aider"),
            (
                "OpenAI/Python 3.57.0",
                "You are a helpful assistant that can interact with a computer.",
                "mini-swe-agent",
            ),
            ("OpenAI/Python 3.57.0", "You are a helpful assistant.", "unknown (OpenAI)"),
            ("", "", "unknown"),
            ("\u{7}x/1", "", "unknown (x)"),
        ];
        for (user_agent, system, name) in cases {
            assert_eq!(agent_name(user_agent, system), name, "{user_agent:?}");
        }
        let late = format!("{}You are Cline", " ".repeat(OPENING_CHARS));
        assert_eq!(agent_name("curl/8", &late), "unknown (curl)", "only the opening counts");
    }
}
