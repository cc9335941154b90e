//! An agent's request, read into the engine's model: the messages as drafts the engine records,
//! each client message with a fingerprint of its normalised content; the system prompt, the
//! tools, and every other field as it came. The formats' readers are `anthropic.rs`,
//! `openai.rs`, `responses.rs` and `gemini.rs`.

use std::sync::LazyLock;

use serde_json::Value;
use xxhash_rust::xxh3::xxh3_64;

use super::record::CallRecord;
use super::route::Format;
use super::wire::{RawObject, TOO_DEEP};
use crate::engine::MessageDraft;
use crate::model::{ContentPart, OpaquePart, Role, without_reminders};
use crate::prompt::ToolSpec;
use crate::store::Redactor;
use crate::tokens::{MESSAGE_OVERHEAD, TokenCounter};

/// An agent's request as the proxy reads it.
#[derive(Debug, Clone)]
pub struct ClientRequest {
    pub format: Format,
    /// Every field as it came; the upstream body replaces `system`/`messages` (and re-marks
    /// `tools`) and keeps the rest.
    pub body: RawObject,
    pub model: String,
    pub stream: bool,
    /// The system prompt as text (what the engine's L1 holds).
    pub system_text: String,
    /// Anthropic: the `system` blocks as they came, breakpoints removed.
    pub system_blocks: Vec<Value>,
    /// The conversation, one entry per message of the request.
    pub messages: Vec<ClientMessage>,
    /// The tools offered, for the engine's count and cache report (the upstream gets `tools`
    /// exactly as they came).
    pub tools: Vec<ToolSpec>,
    /// The agent's own session id (Claude Code's `metadata.user_id`), when it sends one.
    pub agent_session: Option<String>,
    /// Which agent sent it, as its `User-Agent` names it ([`agent_name`]); set by the server.
    pub agent: String,
    /// Anthropic: the first `cache_control` the agent used outside `tools` (its TTL, say),
    /// which the engine's breakpoints then use too.
    pub cache_control: Option<Value>,
    /// Anthropic: the request had `system` messages inside `messages`, so its API takes them.
    pub system_messages: bool,
    /// OpenAI: the role the leading system message came with (`system` or `developer`).
    pub system_role: Option<String>,
    /// The one-shot this conversation opened with, passed through as a side call before the
    /// conversation went on (a text-protocol agent's first call); set by the gateway, counted
    /// as call 1 of the session the request opens.
    pub opening: Option<Box<CallRecord>>,
}

/// One message of the request: what the engine records for it (a user message with tool
/// results becomes one tool message per result and user messages around them) and its
/// fingerprint, a hash of its normalised content (breakpoints, key order and the string or
/// block form of content do not change it).
#[derive(Debug, Clone)]
pub struct ClientMessage {
    pub drafts: Vec<MessageDraft>,
    pub fingerprint: u64,
}

impl ClientMessage {
    /// The message's drafts and their fingerprint.
    pub fn new(drafts: Vec<MessageDraft>) -> ClientMessage {
        let mut text = String::new();
        for draft in &drafts {
            let role = draft.role.map_or("none", Role::as_str);
            text.push_str(role);
            text.push('\u{1}');
            text.push_str(&serde_json::to_string(&draft.content).unwrap_or_default());
            text.push('\u{2}');
        }
        ClientMessage { fingerprint: xxh3_64(text.as_bytes()), drafts }
    }

    /// Whether the message is the assistant's.
    pub fn is_assistant(&self) -> bool {
        self.drafts.iter().any(|d| d.role == Some(Role::Assistant))
    }

    /// The content of its drafts, in order.
    pub fn content(&self) -> Vec<ContentPart> {
        self.drafts.iter().flat_map(|d| d.content.clone()).collect()
    }
}

/// A request the proxy does not manage: malformed (refused with `status` and the reason), or
/// well formed but of a shape the engine does not read (`pass_through`: it goes upstream as it
/// came, and the upstream decides).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError {
    pub status: u16,
    pub message: String,
    pub pass_through: bool,
}

impl RequestError {
    /// A refusal; `message` is kept to one bounded line (it may echo what the agent sent). JSON
    /// nested deeper than the engine reads is no refusal: the request goes as it came.
    pub fn invalid(message: impl Into<String>) -> RequestError {
        let message = super::report::one_line(&message.into());
        RequestError { status: 400, pass_through: message.contains(TOO_DEEP), message }
    }

    pub fn unreadable(message: impl Into<String>) -> RequestError {
        RequestError { pass_through: true, ..RequestError::invalid(message) }
    }
}

/// A 400 error saying what is wrong with the request.
pub(super) fn invalid(message: impl Into<String>) -> RequestError {
    RequestError::invalid(message)
}

/// A request's `messages` (Messages, Chat Completions), of which there must be some.
pub(super) fn messages_of(body: &RawObject) -> Result<Vec<Value>, RequestError> {
    let messages =
        body.field::<Vec<Value>>("messages").map_err(invalid)?.ok_or_else(|| invalid("`messages` is missing"))?;
    if messages.is_empty() {
        return Err(invalid("`messages` is empty"));
    }
    Ok(messages)
}

/// A request's `model`, and whether its reply streams (Messages, Chat Completions, Responses;
/// Gemini's path says both). `null` is how a client leaves an optional field unset (OpenAI's
/// SDKs send it).
pub(super) fn model_and_stream(body: &RawObject) -> Result<(String, bool), RequestError> {
    let model = body.field::<String>("model").map_err(invalid)?.unwrap_or_default();
    let stream = body.field::<Option<bool>>("stream").map_err(invalid)?.flatten().unwrap_or(false);
    Ok((model, stream))
}

/// The request's `tools` list, empty when it has none; each format then reads its tools from it.
pub(super) fn tool_list(value: &Value) -> Result<&[Value], RequestError> {
    match value {
        Value::Null => Ok(&[]),
        Value::Array(tools) => Ok(tools),
        _ => Err(invalid("`tools` must be a list")),
    }
}

impl ClientRequest {
    /// A request of `format` with what every reader reads; the other fields are left empty for
    /// the readers of the formats that have them (and `agent` for the server).
    pub(super) fn new(
        format: Format,
        body: RawObject,
        system_text: String,
        messages: Vec<ClientMessage>,
        tools: Vec<ToolSpec>,
    ) -> ClientRequest {
        ClientRequest {
            format,
            body,
            model: String::new(),
            stream: false,
            system_text,
            system_blocks: Vec::new(),
            messages,
            tools,
            agent_session: None,
            agent: String::new(),
            cache_control: None,
            system_messages: false,
            system_role: None,
            opening: None,
        }
    }

    /// The fingerprints of the request's messages, in order.
    pub fn fingerprints(&self) -> Vec<u64> {
        self.messages.iter().map(|m| m.fingerprint).collect()
    }

    /// The request's prompt tokens as the engine counts them (system prompt, messages with
    /// their overhead, tools), to compare with what the engine sends.
    pub fn tokens(&self, counter: &TokenCounter) -> usize {
        let system = if self.system_text.is_empty() { 0 } else { counter.count(&self.system_text) + MESSAGE_OVERHEAD };
        let messages: usize =
            self.messages.iter().flat_map(|m| &m.drafts).map(|d| counter.count_message_content(&d.content)).sum();
        let tools: usize =
            self.tools.iter().map(|t| counter.count(&serde_json::to_string(t).unwrap_or_default())).sum();
        system + messages + tools
    }

    /// The history an agent starts again with after compacting its own (Claude Code's
    /// auto-compact and `/compact`): its first user message is the summary of what came before.
    pub fn continues_a_compacted_history(&self) -> bool {
        const MARKERS: [&str; 1] = ["This session is being continued from a previous conversation"];
        let opening = self.opening_text();
        MARKERS.iter().any(|m| opening.starts_with(m))
    }

    /// The user's words the conversation opens with: the first user message's text, without
    /// the reminders an agent injects (Claude Code sends them as blocks of their own), trimmed.
    pub fn opening_text(&self) -> String {
        let first = self.messages.iter().flat_map(|m| &m.drafts).find(|d| d.role == Some(Role::User));
        let texts = first.into_iter().flat_map(|d| &d.content).filter_map(|p| match p {
            ContentPart::Text { text } => Some(without_reminders(text)),
            _ => None,
        });
        texts.collect::<Vec<_>>().join("\n").trim().to_owned()
    }

    /// A side call (a title, a one-shot classification such as Claude Code's auto-mode check):
    /// no tools and no assistant turn, whatever its size (OpenCode asks for its title in two
    /// user messages). Never a conversation with history: a request without tools whose history
    /// has the assistant's turns is the main loop of an agent that acts through text (aider's
    /// first call already has its examples' turns).
    pub fn is_side_call(&self) -> bool {
        self.tools.is_empty() && !self.messages.iter().any(ClientMessage::is_assistant)
    }

    /// The key of the conversation this request continues (see [`SessionKey`]), for `person`
    /// (team mode's signed-in member).
    pub fn session_key(&self, header_session: Option<&str>, person: Option<&str>) -> SessionKey {
        let agent_session =
            self.agent_session.clone().or_else(|| header_session.map(str::to_owned)).filter(|s| !s.trim().is_empty());
        let mut seed = format!("{}\u{1}", self.format.name());
        if let Some(first) = self.messages.first() {
            seed.push_str(&first.fingerprint.to_string());
        }
        if agent_session.is_none() {
            seed.push('\u{1}');
            seed.push_str(&self.system_text);
            for tool in &self.tools {
                seed.push('\u{1}');
                seed.push_str(&tool.name);
            }
        }
        SessionKey { agent_session, conversation: xxh3_64(seed.as_bytes()), person: person.map(str::to_owned) }
    }
}

/// Which conversation a request belongs to: the agent's session id when it sends one (Claude
/// Code's `metadata.user_id`, an `x-session-id`-like header) and a hash of the first message
/// (which tells a session's sub-agents apart); without a session id, the hash also covers the
/// system prompt and the tools' names. In team mode, the member who sent it too: two people's
/// identical conversations are two sessions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SessionKey {
    pub agent_session: Option<String>,
    /// A hash; 16 hex digits in its serde form (JavaScript's numbers hold 53 bits).
    #[serde(with = "hex_u64")]
    #[cfg_attr(test, ts(type = "string"))]
    pub conversation: u64,
    /// The team member who signed the request in (team mode only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub person: Option<String>,
}

/// A `u64` as 16 hex digits.
mod hex_u64 {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format!("{value:016x}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        let text = String::deserialize(deserializer)?;
        u64::from_str_radix(&text, 16).map_err(|e| D::Error::custom(format!("a conversation hash `{text}`: {e}")))
    }
}

impl SessionKey {
    /// The key as a map's name: the agent's session id and the conversation's hash, after the
    /// person's name in team mode.
    pub fn name(&self) -> String {
        let person = self.person.as_ref().map(|p| format!("{p}\u{2}")).unwrap_or_default();
        format!("{person}{}\u{1}{:016x}", self.agent_session.as_deref().unwrap_or(""), self.conversation)
    }

    /// The trace id the key's first conversation is saved under: the agent's session id made a
    /// plain name (letters, digits, `-`, `_`, `.`; at most 64 characters), else `proxy-<hash>`;
    /// also when the id looks like a secret (a key pasted as a session id never becomes a
    /// directory's name). In team mode, after the person's name and a dot (`alice.proxy-…`: a
    /// name has no dot, so no two people's bases meet).
    pub fn trace_base(&self) -> String {
        match &self.person {
            Some(person) => format!("{person}.{}", self.agent_base()),
            None => self.agent_base(),
        }
    }

    fn agent_base(&self) -> String {
        let hashed = format!("proxy-{:016x}", self.conversation);
        match &self.agent_session {
            Some(session) if !looks_secret(session) => {
                let name: String = session
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '-' })
                    .take(64)
                    .collect();
                let name = name.trim_matches('.').to_owned();
                if name.is_empty() { hashed } else { name }
            }
            _ => hashed,
        }
    }
}

/// Whether `text` holds a secret's shape (a provider key, a token), as the store's redaction
/// finds them.
fn looks_secret(text: &str) -> bool {
    static SECRETS: LazyLock<Option<Redactor>> = LazyLock::new(|| Redactor::new(true, &[]).ok());
    SECRETS.as_ref().is_some_and(|redactor| redactor.redact_text(text).1 > 0)
}

/// An opaque part for a block the engine does not read, with its estimated tokens: an image
/// costs about 1,600 tokens (the providers' figure for a full-size image); anything else the
/// tokens of its JSON, or a quarter of its bytes past 256 KB (base64 data, say).
pub fn opaque_part(block: &Value, counter: &TokenCounter) -> ContentPart {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("block").to_owned();
    let json = serde_json::to_string(block).unwrap_or_default();
    let tokens = if matches!(kind.as_str(), "image" | "image_url" | "input_image") {
        1_600
    } else if json.len() > 256 * 1024 {
        json.len() / 4
    } else {
        counter.count(&json)
    };
    ContentPart::Opaque(OpaquePart { kind, json, tokens: u32::try_from(tokens).unwrap_or(u32::MAX) })
}

/// A draft of `role` with `content`, naming the call a tool message answers.
pub fn draft(role: Role, content: Vec<ContentPart>) -> MessageDraft {
    let tool_call_id = match role {
        Role::Tool => content.iter().find_map(|p| match p {
            ContentPart::ToolResult(r) => Some(r.call_id.clone()),
            _ => None,
        }),
        _ => None,
    };
    MessageDraft { tool_call_id, ..MessageDraft::new(role, content) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_ignore_the_form_of_content() {
        let counter = TokenCounter::new(crate::tokens::Encoding::O200kBase);
        let parse = |body: &[u8]| ClientRequest::parse(Format::Anthropic, body, &counter).unwrap();
        let a = parse(br#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#);
        let b = parse(
            br#"{"messages":[{"content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}],"role":"user"}],"model":"m"}"#,
        );
        assert_eq!(a.fingerprints(), b.fingerprints());
        assert_eq!(a.session_key(None, None), b.session_key(None, None));
        let (alice, bob) = (a.session_key(None, Some("alice")), a.session_key(None, Some("bob")));
        assert_ne!(alice.name(), bob.name(), "two people's identical conversations are two sessions");
        assert_ne!(alice.name(), a.session_key(None, None).name());
        assert_eq!(alice.trace_base(), format!("alice.{}", a.session_key(None, None).trace_base()));
        let c = parse(br#"{"model":"m","messages":[{"role":"user","content":"ho"}]}"#);
        assert_ne!(a.fingerprints(), c.fingerprints());
    }

    #[test]
    fn trace_bases_are_plain_names() {
        let key = SessionKey { agent_session: Some("2e0b/../x y".into()), conversation: 7, person: None };
        assert_eq!(key.trace_base(), "2e0b-..-x-y");
        let key = SessionKey { agent_session: None, conversation: 255, person: None };
        assert_eq!(key.trace_base(), "proxy-00000000000000ff");
        let key = SessionKey { agent_session: Some("..".into()), conversation: 1, person: None };
        assert_eq!(key.trace_base(), "proxy-0000000000000001");
        let key = SessionKey {
            agent_session: Some("sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123".into()),
            conversation: 2,
            person: None,
        };
        assert_eq!(key.trace_base(), "proxy-0000000000000002", "a key is never a directory's name");
        for secret in ["gsk_abcdefghijklmnopqrstuvwxyz0123456789AB", "xai-abcdefghijklmnopqrstuvwxyz0123456789AB"] {
            let key = SessionKey { agent_session: Some(secret.into()), conversation: 3, person: None };
            assert_eq!(key.trace_base(), "proxy-0000000000000003", "Groq's and xAI's keys too: {secret}");
        }
    }
}
