//! OpenAI-compatible chat completions: the request a turn sends, and the tolerant
//! assembly of the reply from its stream (or from one JSON answer).
//!
//! What the assembler tolerates, because real servers do it: tool calls keyed by
//! `index`, or with `index` missing or reused for parallel calls (a new id starts a new
//! call); an id, name or type that arrives late or repeats; no arguments in the first
//! chunk, or none at all (`{}`); a `finish_reason` that is missing, empty, or `stop`
//! despite tool calls (the calls decide); a usage chunk whose `choices` is `[]`, `null`
//! or `[{"delta":{}}]`. What it refuses: a stream that ends with neither `[DONE]` nor
//! the usage chunk (a truncation, even after a finish), a stream without any reply (a
//! bare `[DONE]`), a chunk that is not JSON, an `error` in the stream.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::fields::{merge_unknown, Key};
use super::{
    body_json, complete_calls, too_many_calls, ProviderError, ProviderReply, ProviderRequest,
    Usage, Wire, MAX_CALLS_PER_REPLY,
};
use crate::conversation::{Message, ToolCall};

const WIRE: &str = Wire::Openai.as_str();

/// The JSON body of a chat completions request for `model`.
pub fn request_body(model: &str, request: &ProviderRequest<'_>, stream: bool) -> Vec<u8> {
    let tools = if request.tools.trim() == "[]" {
        None
    } else {
        serde_json::from_str::<&RawValue>(request.tools).ok()
    };
    let body = Body {
        model,
        messages: Messages(request),
        tool_choice: tools.map(|_| if request.allow_tools { "auto" } else { "none" }),
        tools,
        max_tokens: request.max_output_tokens,
        stream,
        stream_options: stream.then_some(StreamOptions {
            include_usage: true,
        }),
    };
    body_json(&body, request)
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Messages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

struct Messages<'a>(&'a ProviderRequest<'a>);

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let request = self.0;
        let mut seq = serializer.serialize_seq(None)?;
        for system in request.system {
            seq.serialize_element(&Role("system", system))?;
        }
        for message in request.history {
            seq.serialize_element(&OpenAiMessage(message))?;
        }
        seq.end()
    }
}

struct Role<'a>(&'static str, &'a str);

impl Serialize for Role<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("role", self.0)?;
        map.serialize_entry("content", self.1)?;
        map.end()
    }
}

struct OpenAiMessage<'a>(&'a Message);

impl Serialize for OpenAiMessage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Message::User { content } => Role("user", content).serialize(serializer),
            Message::Assistant {
                content,
                tool_calls,
                extra,
            } => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("role", "assistant")?;
                if content.is_empty() && !tool_calls.is_empty() {
                    map.serialize_entry("content", &())?;
                } else {
                    map.serialize_entry("content", content)?;
                }
                if !tool_calls.is_empty() {
                    map.serialize_entry("tool_calls", &OpenAiCalls(tool_calls))?;
                }
                if let Some(Value::Object(unknown)) = extra.get(WIRE) {
                    for (key, value) in unknown {
                        map.serialize_entry(key, value)?;
                    }
                }
                map.end()
            }
            Message::Tool {
                call_id, content, ..
            } => {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("role", "tool")?;
                map.serialize_entry("tool_call_id", call_id)?;
                map.serialize_entry("content", content)?;
                map.end()
            }
        }
    }
}

struct OpenAiCalls<'a>(&'a [ToolCall]);

impl Serialize for OpenAiCalls<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(OpenAiCall))
    }
}

struct OpenAiCall<'a>(&'a ToolCall);

impl Serialize for OpenAiCall<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Function<'a> {
            name: &'a str,
            arguments: &'a str,
        }
        let call = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", &call.id)?;
        map.serialize_entry("type", "function")?;
        map.serialize_entry(
            "function",
            &Function {
                name: &call.name,
                arguments: &call.arguments,
            },
        )?;
        for (key, value) in &call.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// Puts a reply together from the `data` of each event of a streamed answer.
#[derive(Debug, Default)]
pub struct StreamAssembler {
    reply: ProviderReply,
    /// The `index` each call of `reply.tool_calls` came with.
    indexes: Vec<Option<u64>>,
    done: bool,
    /// Whether the usage came with or after the finish: the usage chunk the request asks
    /// for (`include_usage`), which a server sends after the last choice. A server that
    /// sends usage with every chunk ends nothing before its finish.
    usage_after_finish: bool,
}

impl StreamAssembler {
    /// Takes one event's data, handing its text to `text`.
    pub fn event(&mut self, data: &str, text: &mut dyn FnMut(&str)) -> Result<(), ProviderError> {
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|error| {
            ProviderError::Malformed(format!(
                "a stream chunk is not a chat completion chunk: {error}"
            ))
        })?;
        if let Some(error) = chunk.error {
            return Err(ProviderError::Malformed(format!(
                "the provider reported an error in its stream: {error}"
            )));
        }
        let usage = chunk.usage.is_some();
        if let Some(usage) = chunk.usage {
            self.reply.usage = usage.into();
        }
        self.usage_after_finish |= usage && self.reply.finish.is_some();
        // One reply is asked for (`n` is not sent): only choice 0 counts.
        let Some(choice) = chunk
            .choices
            .and_then(|choices| choices.0)
            .filter(|choice| choice.index.unwrap_or(0) == 0)
        else {
            return Ok(());
        };
        if let Some(finish) = choice.finish_reason.filter(|finish| !finish.is_empty()) {
            self.reply.finish = Some(finish);
        }
        if let Some(delta) = choice.delta {
            self.delta(delta, text)?;
        }
        self.usage_after_finish |= usage && self.reply.finish.is_some();
        Ok(())
    }

    fn delta(&mut self, delta: Delta, text: &mut dyn FnMut(&str)) -> Result<(), ProviderError> {
        if let Some(content) = delta.content.filter(|content| !content.is_empty()) {
            text(&content);
            append(&mut self.reply.text, content);
        }
        for (key, value) in delta.unknown {
            merge_unknown(&mut self.reply.extra, Cow::Owned(key), value);
        }
        for piece in delta.tool_calls {
            let at = self.call_for(&piece)?;
            let call = &mut self.reply.tool_calls[at];
            if let Some(id) = piece.id.filter(|id| !id.is_empty()) {
                call.id = id;
            }
            if let Some(name) = piece.name.filter(|name| !name.is_empty()) {
                // A repeated name is a repeat; a different one continues a name streamed
                // in pieces.
                if call.name != name {
                    append(&mut call.name, name);
                }
            }
            if let Some(arguments) = piece.arguments {
                append(&mut call.arguments, arguments);
            }
            for (key, value) in piece.unknown {
                merge_unknown(&mut call.extra, Cow::Owned(key), value);
            }
        }
        Ok(())
    }

    /// Which call a piece belongs to: a new one when its id differs from the id of the
    /// call at its index (or of the last call, without an index), or when its index is
    /// new; the last call otherwise.
    fn call_for(&mut self, piece: &CallDelta) -> Result<usize, ProviderError> {
        let at = match piece.index {
            Some(index) => self.indexes.iter().rposition(|&known| known == Some(index)),
            None => self.reply.tool_calls.len().checked_sub(1),
        };
        let new_id = |at: usize| match &piece.id {
            Some(id) if !id.is_empty() => {
                let known = &self.reply.tool_calls[at].id;
                !known.is_empty() && known != id
            }
            _ => false,
        };
        match at {
            Some(at) if !new_id(at) => Ok(at),
            _ if self.reply.tool_calls.len() == MAX_CALLS_PER_REPLY => Err(too_many_calls()),
            _ => {
                self.reply.tool_calls.push(ToolCall::default());
                self.indexes.push(piece.index);
                Ok(self.reply.tool_calls.len() - 1)
            }
        }
    }

    /// The reply, once the stream ended. It is whole only when the wire says so: by
    /// `[DONE]`, or by the usage chunk that comes after the last choice. A stream cut
    /// anywhere before, even after a `finish_reason`, was cut off: its usage (what the
    /// turn is charged, what `max_tokens` counts) never came. A stream that held no
    /// choice at all (a bare `[DONE]`) is no reply either.
    pub fn finish(self) -> Result<ProviderReply, ProviderError> {
        if !self.done && !self.usage_after_finish {
            return Err(ProviderError::Truncated(
                "the stream ended with neither [DONE] nor its usage".into(),
            ));
        }
        let reply = &self.reply;
        if reply.finish.is_none() && reply.text.is_empty() && reply.tool_calls.is_empty() {
            return Err(ProviderError::Truncated(
                "the stream ended without a reply: no text, no tool call, no finish_reason".into(),
            ));
        }
        Ok(complete(self.reply))
    }
}

/// `piece` added to the end of `whole`: the first piece becomes it, without a copy.
fn append(whole: &mut String, piece: String) {
    if whole.is_empty() {
        *whole = piece;
    } else {
        whole.push_str(&piece);
    }
}

/// The calls made answerable ([`complete_calls`]).
fn complete(mut reply: ProviderReply) -> ProviderReply {
    complete_calls(&mut reply.tool_calls);
    reply
}

/// The reply of a chat completion that was not streamed.
pub fn parse_reply(body: &[u8]) -> Result<ProviderReply, ProviderError> {
    let completion: Chunk = serde_json::from_slice(body).map_err(|error| {
        ProviderError::Malformed(format!("the answer is not a chat completion: {error}"))
    })?;
    if let Some(error) = completion.error {
        return Err(ProviderError::Malformed(format!(
            "the provider reported an error: {error}"
        )));
    }
    let choice = completion
        .choices
        .and_then(|choices| choices.0)
        .ok_or_else(|| ProviderError::Malformed("the answer has no choice".into()))?;
    let mut assembler = StreamAssembler::default();
    if let Some(message) = choice.message {
        assembler.delta(*message, &mut |_| {})?;
    }
    let mut reply = assembler.reply;
    reply.finish = choice.finish_reason.filter(|finish| !finish.is_empty());
    reply.usage = completion.usage.map(Into::into).unwrap_or_default();
    Ok(complete(reply))
}

/// A stream chunk, or a whole completion (the same fields, `message` for `delta`).
#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<FirstChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: Option<u64>,
    /// A chunk's delta.
    #[serde(default)]
    delta: Option<Delta>,
    /// A completion's message, boxed: a choice is moved whole several times as a chunk
    /// is read, and two deltas in place would double what each move copies.
    #[serde(default)]
    message: Option<Box<Delta>>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

impl From<WireUsage> for Usage {
    fn from(usage: WireUsage) -> Self {
        Self {
            input_tokens: usage.prompt_tokens,
            output_tokens: usage.completion_tokens,
        }
    }
}

/// The choice a chunk (or a completion) is read for: the first whose `index` is 0 or
/// missing, else the first. The others are read and dropped, so that a chunk builds no
/// list of them.
struct FirstChoice(Option<Choice>);

impl<'de> Deserialize<'de> for FirstChoice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ChoicesVisitor;
        impl<'de> Visitor<'de> for ChoicesVisitor {
            type Value = FirstChoice;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of choices")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FirstChoice, A::Error> {
                let mut kept: Option<Choice> = None;
                while let Some(choice) = seq.next_element::<Choice>()? {
                    let replaces = match &kept {
                        None => true,
                        Some(kept) => {
                            kept.index.unwrap_or(0) != 0 && choice.index.unwrap_or(0) == 0
                        }
                    };
                    if replaces {
                        kept = Some(choice);
                    }
                }
                Ok(FirstChoice(kept))
            }
        }
        deserializer.deserialize_seq(ChoicesVisitor)
    }
}

/// A message delta (or a whole message): its text, its calls, and every other field.
#[derive(Default)]
struct Delta {
    content: Option<String>,
    tool_calls: Pieces,
    unknown: Vec<(String, Value)>,
}

/// The call pieces of a delta, the first held in place: a streamed chunk mostly carries
/// one, and a list for it would be an allocation for every piece of every call.
#[derive(Default)]
struct Pieces {
    first: Option<CallDelta>,
    rest: Vec<CallDelta>,
}

impl IntoIterator for Pieces {
    type Item = CallDelta;
    type IntoIter =
        std::iter::Chain<std::option::IntoIter<CallDelta>, std::vec::IntoIter<CallDelta>>;

    fn into_iter(self) -> Self::IntoIter {
        self.first.into_iter().chain(self.rest)
    }
}

impl<'de> Deserialize<'de> for Pieces {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PiecesVisitor;
        impl<'de> Visitor<'de> for PiecesVisitor {
            type Value = Pieces;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of tool call deltas")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Pieces, A::Error> {
                let mut pieces = Pieces {
                    first: seq.next_element()?,
                    rest: Vec::new(),
                };
                while let Some(piece) = seq.next_element()? {
                    pieces.rest.push(piece);
                }
                Ok(pieces)
            }
        }
        deserializer.deserialize_seq(PiecesVisitor)
    }
}

/// A piece of a tool call.
#[derive(Default)]
struct CallDelta {
    index: Option<u64>,
    id: Option<String>,
    name: Option<String>,
    arguments: Option<String>,
    unknown: Vec<(String, Value)>,
}

#[derive(Deserialize, Default)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

// Hand-written so that unknown fields are kept without buffering every known one (as
// `#[serde(flatten)]` would).
impl<'de> Deserialize<'de> for Delta {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DeltaVisitor;
        impl<'de> Visitor<'de> for DeltaVisitor {
            type Value = Delta;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a message delta")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Delta, A::Error> {
                let mut delta = Delta::default();
                while let Some(Key(key)) = map.next_key()? {
                    match key.as_ref() {
                        "content" => delta.content = map.next_value()?,
                        "tool_calls" => {
                            delta.tool_calls = map.next_value::<Option<_>>()?.unwrap_or_default()
                        }
                        // What the engine sets itself, or a refusal it does not use.
                        "role" | "refusal" | "function_call" => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                        _ => delta.unknown.push((key.into_owned(), map.next_value()?)),
                    }
                }
                Ok(delta)
            }
        }
        deserializer.deserialize_map(DeltaVisitor)
    }
}

impl<'de> Deserialize<'de> for CallDelta {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CallVisitor;
        impl<'de> Visitor<'de> for CallVisitor {
            type Value = CallDelta;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a tool call delta")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CallDelta, A::Error> {
                let mut call = CallDelta::default();
                while let Some(Key(key)) = map.next_key()? {
                    match key.as_ref() {
                        "index" => call.index = map.next_value()?,
                        "id" => call.id = map.next_value()?,
                        "type" => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                        "function" => {
                            let function: Option<FunctionDelta> = map.next_value()?;
                            let function = function.unwrap_or_default();
                            call.name = function.name;
                            call.arguments = function.arguments;
                        }
                        _ => call.unknown.push((key.into_owned(), map.next_value()?)),
                    }
                }
                Ok(call)
            }
        }
        deserializer.deserialize_map(CallVisitor)
    }
}
