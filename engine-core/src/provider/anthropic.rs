//! Anthropic's Messages API: the request a turn sends, and the reply assembled from its
//! event stream (`content_block_*` with `text_delta` and `input_json_delta`) or from one
//! JSON answer. Blocks the engine does not know (`thinking` with its signature,
//! `redacted_thinking`) are kept whole and sent back first in the assistant's content,
//! as the API requires.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::fields::merge_unknown;
use super::{
    body_json, complete_calls, too_many_calls, ProviderError, ProviderReply, ProviderRequest,
    Usage, Wire, MAX_CALLS_PER_REPLY,
};
use crate::conversation::{Message, ToolCall, ToolStatus};

const WIRE: &str = Wire::Anthropic.as_str();

/// Where the blocks the engine does not know are kept in an assistant message's extra.
const KEPT_BLOCKS: &str = "content_blocks";

/// The JSON body of a Messages request for `model`.
pub fn request_body(model: &str, request: &ProviderRequest<'_>, stream: bool) -> Vec<u8> {
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    body.insert("max_tokens".into(), request.max_output_tokens.into());
    if !request.system.is_empty() {
        body.insert("system".into(), request.system.join("\n\n").into());
    }
    body.insert("messages".into(), Value::Array(messages(request.history)));
    if let Ok(tools) = serde_json::from_str::<Value>(request.tools) {
        if tools.as_array().is_some_and(|tools| !tools.is_empty()) {
            body.insert("tools".into(), tools);
            let choice = if request.allow_tools { "auto" } else { "none" };
            body.insert("tool_choice".into(), json!({ "type": choice }));
        }
    }
    body.insert("stream".into(), stream.into());
    body_json(&body, request)
}

/// The history as Messages: tool results go in a user message, and consecutive
/// messages of one role are merged, since roles must alternate.
fn messages(history: &[Message]) -> Vec<Value> {
    let mut out: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in history {
        let (role, blocks) = match message {
            Message::User { content } => ("user", text_block(content).into_iter().collect()),
            Message::Tool {
                call_id,
                status,
                content,
                ..
            } => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": content,
                    "is_error": *status != ToolStatus::Ok,
                })],
            ),
            Message::Assistant {
                content,
                tool_calls,
                extra,
            } => ("assistant", assistant_blocks(content, tool_calls, extra)),
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((last, kept)) if *last == role => kept.extend(blocks),
            _ => out.push((role, blocks)),
        }
    }
    out.into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect()
}

/// A text block, unless the text is blank: the API refuses blank text blocks.
fn text_block(text: &str) -> Option<Value> {
    (!text.trim().is_empty()).then(|| json!({"type": "text", "text": text}))
}

fn assistant_blocks(content: &str, calls: &[ToolCall], extra: &Map<String, Value>) -> Vec<Value> {
    let mut blocks: Vec<Value> = extra
        .get(WIRE)
        .and_then(|kept| kept.get(KEPT_BLOCKS))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    blocks.extend(text_block(content));
    for call in calls {
        // Arguments that are not a JSON object were answered as invalid; the API takes
        // only an object as input.
        let input = serde_json::from_str::<Value>(&call.arguments)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    blocks
}

/// One content block being streamed.
#[derive(Debug)]
enum Block {
    Text,
    Tool(ToolCall, Value),
    Kept(Map<String, Value>),
}

/// Puts a reply together from the `data` of each event of a streamed answer.
#[derive(Debug, Default)]
pub struct StreamAssembler {
    blocks: Vec<(u64, Block)>,
    /// How many of `blocks` are tool calls.
    calls: usize,
    text: String,
    usage: Usage,
    finish: Option<String>,
    done: bool,
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    message: Option<StartedMessage>,
    #[serde(default)]
    content_block: Option<Map<String, Value>>,
    #[serde(default)]
    delta: Option<Map<String, Value>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct StartedMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

impl StreamAssembler {
    /// Keeps `block`, a call only while the reply holds fewer than the engine answers.
    fn push_block(&mut self, index: u64, block: Block) -> Result<(), ProviderError> {
        if let Block::Tool(..) = block {
            if self.calls == MAX_CALLS_PER_REPLY {
                return Err(too_many_calls());
            }
            self.calls += 1;
        }
        self.blocks.push((index, block));
        Ok(())
    }

    /// Takes one event's data, handing its text to `text`.
    pub fn event(&mut self, data: &str, text: &mut dyn FnMut(&str)) -> Result<(), ProviderError> {
        let event: Event = serde_json::from_str(data).map_err(|error| {
            ProviderError::Malformed(format!("a stream event is not a Messages event: {error}"))
        })?;
        match event.kind.as_str() {
            "message_start" => {
                // Its output count is a placeholder (the final one comes with
                // `message_delta`): a stream that never gives one has not reported it.
                if let Some(usage) = event.message.and_then(|message| message.usage) {
                    self.usage(WireUsage {
                        output_tokens: None,
                        ..usage
                    });
                }
            }
            "content_block_start" => {
                let index = event.index.unwrap_or(self.blocks.len() as u64);
                let block = started(
                    event.content_block.unwrap_or_default(),
                    &mut self.text,
                    text,
                );
                self.push_block(index, block)?;
            }
            "content_block_delta" => {
                let delta = event.delta.unwrap_or_default();
                let index = event.index.unwrap_or(self.blocks.len() as u64);
                self.delta(index, delta, text);
            }
            "message_delta" => {
                if let Some(stop) = event
                    .delta
                    .and_then(|mut delta| delta.remove("stop_reason"))
                    .and_then(|stop| stop.as_str().map(str::to_owned))
                {
                    self.finish = Some(stop);
                }
                if let Some(usage) = event.usage {
                    self.usage(usage);
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                return Err(ProviderError::Malformed(format!(
                    "the provider reported an error in its stream: {}",
                    event.error.unwrap_or_default()
                )))
            }
            _ => {} // ping, content_block_stop, and events added later
        }
        Ok(())
    }

    fn usage(&mut self, usage: WireUsage) {
        if let Some(input) = usage.input_tokens {
            self.usage.input_tokens = input;
        }
        if let Some(output) = usage.output_tokens {
            self.usage.output_tokens = output;
        }
    }

    fn delta(&mut self, index: u64, mut delta: Map<String, Value>, text: &mut dyn FnMut(&str)) {
        let at = match self.blocks.iter().rposition(|(known, _)| *known == index) {
            Some(at) => at,
            None => {
                // A delta before its block's start: take the block as plain text.
                self.blocks.push((index, Block::Text));
                self.blocks.len() - 1
            }
        };
        let kind = delta.remove("type");
        match (
            &mut self.blocks[at].1,
            kind.as_ref().and_then(Value::as_str),
        ) {
            (Block::Text, Some("text_delta")) => {
                if let Some(Value::String(piece)) = delta.remove("text") {
                    text(&piece);
                    self.text.push_str(&piece);
                }
            }
            (Block::Tool(call, _), Some("input_json_delta")) => {
                if let Some(Value::String(piece)) = delta.remove("partial_json") {
                    call.arguments.push_str(&piece);
                }
            }
            (Block::Kept(block), _) => {
                for (key, value) in delta {
                    merge_unknown(block, Cow::Owned(key), value);
                }
            }
            _ => {} // a delta of a kind its block does not take (citations, say)
        }
    }

    /// The reply, once the stream ended: one without `message_stop` was cut off, and
    /// one that said nothing (no text, no tool use, no `stop_reason`: a bare
    /// `message_stop`, or empty blocks) is no reply either.
    pub fn finish(self) -> Result<ProviderReply, ProviderError> {
        if !self.done {
            return Err(ProviderError::Truncated(
                "the stream ended before message_stop".into(),
            ));
        }
        if self.finish.is_none() && self.text.is_empty() && self.calls == 0 {
            return Err(ProviderError::Truncated(
                "the stream ended without a reply: no text, no tool use, no stop_reason".into(),
            ));
        }
        let mut reply = ProviderReply {
            text: self.text,
            finish: self.finish,
            usage: self.usage,
            ..ProviderReply::default()
        };
        let mut kept = Vec::new();
        for (_, block) in self.blocks {
            match block {
                Block::Text => {}
                Block::Tool(mut call, input) => {
                    if call.arguments.trim().is_empty() {
                        call.arguments = input.to_string();
                    }
                    reply.tool_calls.push(call);
                }
                Block::Kept(block) => kept.push(Value::Object(block)),
            }
        }
        if !kept.is_empty() {
            reply.extra.insert(KEPT_BLOCKS.into(), Value::Array(kept));
        }
        complete_calls(&mut reply.tool_calls);
        Ok(reply)
    }
}

/// A block as its start event gives it.
fn started(
    mut block: Map<String, Value>,
    all_text: &mut String,
    text: &mut dyn FnMut(&str),
) -> Block {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => {
            if let Some(Value::String(start)) = block.remove("text") {
                if !start.is_empty() {
                    text(&start);
                    all_text.push_str(&start);
                }
            }
            Block::Text
        }
        Some("tool_use") => {
            let string = |block: &mut Map<String, Value>, key: &str| match block.remove(key) {
                Some(Value::String(value)) => value,
                _ => String::new(),
            };
            let call = ToolCall {
                id: string(&mut block, "id"),
                name: string(&mut block, "name"),
                arguments: String::new(),
                extra: Map::new(),
            };
            let input = block
                .remove("input")
                .filter(Value::is_object)
                .unwrap_or_else(|| json!({}));
            Block::Tool(call, input)
        }
        _ => Block::Kept(block),
    }
}

/// The reply of a Messages request that was not streamed.
pub fn parse_reply(body: &[u8]) -> Result<ProviderReply, ProviderError> {
    #[derive(Deserialize)]
    struct Answer {
        #[serde(default)]
        content: Vec<Map<String, Value>>,
        #[serde(default)]
        stop_reason: Option<String>,
        #[serde(default)]
        usage: Option<WireUsage>,
        #[serde(default)]
        error: Option<Value>,
    }
    let answer: Answer = serde_json::from_slice(body).map_err(|error| {
        ProviderError::Malformed(format!("the answer is not a Messages reply: {error}"))
    })?;
    if let Some(error) = answer.error {
        return Err(ProviderError::Malformed(format!(
            "the provider reported an error: {error}"
        )));
    }
    let mut assembler = StreamAssembler::default();
    for (index, block) in answer.content.into_iter().enumerate() {
        let mut block = started(block, &mut assembler.text, &mut |_| {});
        if let Block::Tool(call, input) = &mut block {
            call.arguments = input.to_string();
        }
        assembler.push_block(index as u64, block)?;
    }
    if let Some(usage) = answer.usage {
        assembler.usage(usage);
    }
    assembler.finish = answer.stop_reason;
    assembler.done = true;
    assembler.finish()
}
