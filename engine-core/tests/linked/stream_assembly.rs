//! Stream assembly against raw SSE fixtures: one test per quirk real servers have
//! (OpenAI, vLLM, Ollama, Gemini's OpenAI compatibility, Anthropic), each stream fed
//! through `SseSplitter` whole, byte by byte and every 7 bytes, which must all agree.

use engine_core::conversation::{Message, ToolCall, ToolStatus};
use engine_core::provider::{
    anthropic, openai, ProviderError, ProviderReply, ProviderRequest, SseSplitter, Usage, Wire,
};
use serde_json::{json, Map, Value};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// The two assemblers, behind one interface.
trait Assembler: Default {
    fn take(&mut self, data: &str, text: &mut dyn FnMut(&str)) -> Result<(), ProviderError>;
    fn end(self) -> Result<ProviderReply, ProviderError>;
}

macro_rules! assembler {
    ($($kind:ty),*) => {$(
        impl Assembler for $kind {
            fn take(&mut self, data: &str, text: &mut dyn FnMut(&str)) -> Result<(), ProviderError> {
                self.event(data, text)
            }
            fn end(self) -> Result<ProviderReply, ProviderError> {
                self.finish()
            }
        }
    )*};
}
assembler!(openai::StreamAssembler, anthropic::StreamAssembler);

/// The reply a stream assembles to, and the text pieces handed out on the way.
type Assembled = (Result<ProviderReply, ProviderError>, Vec<String>);

fn assemble_in_cuts<A: Assembler>(stream: &str, cut: usize) -> Assembled {
    let mut splitter = SseSplitter::default();
    let mut assembler = A::default();
    let mut pieces = Vec::new();
    let mut on_event =
        |_: &str, data: &str| assembler.take(data, &mut |piece| pieces.push(piece.to_owned()));
    let fed = stream
        .as_bytes()
        .chunks(cut)
        .try_for_each(|bytes| splitter.feed(bytes, &mut on_event))
        .and_then(|()| splitter.finish(&mut on_event));
    (fed.and_then(|()| assembler.end()), pieces)
}

/// Assembles `stream` fed whole, byte by byte and every 7 bytes: all three must agree.
fn assemble<A: Assembler>(stream: &str) -> Assembled {
    let whole = assemble_in_cuts::<A>(stream, stream.len().max(1));
    for cut in [1, 7] {
        let cut_up = assemble_in_cuts::<A>(stream, cut);
        assert_eq!(cut_up, whole, "fed in cuts of {cut} bytes");
    }
    whole
}

fn assemble_openai(stream: &str) -> Result<ProviderReply, ProviderError> {
    assemble::<openai::StreamAssembler>(stream).0
}

fn assemble_anthropic(stream: &str) -> Result<ProviderReply, ProviderError> {
    assemble::<anthropic::StreamAssembler>(stream).0
}

/// An SSE fixture as written in a test: each line's indentation removed and each line
/// ended with `\n` (the blank lines that close events included).
fn sse(fixture: &str) -> String {
    fixture
        .lines()
        .map(|line| format!("{}\n", line.trim_start()))
        .collect()
}

/// `stream` up to (not including) the first `marker`.
fn cut_before<'a>(stream: &'a str, marker: &str) -> &'a str {
    &stream[..stream.find(marker).expect("the marker is in the stream")]
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
        extra: Map::new(),
    }
}

fn calls_reply(finish: &str, tool_calls: Vec<ToolCall>) -> ProviderReply {
    ProviderReply {
        tool_calls,
        finish: Some(finish.into()),
        ..ProviderReply::default()
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn tool_result(call_id: &str, status: ToolStatus, content: &str) -> Message {
    Message::Tool {
        call_id: call_id.into(),
        name: "weather__forecast".into(),
        status,
        content: content.into(),
    }
}

/// The request body `wire` sends for `history`, parsed back.
fn request_json(wire: Wire, history: &[Message], tools: &str, allow_tools: bool) -> Value {
    let system = ["You are terse.".to_owned()];
    let request = ProviderRequest {
        system: &system,
        history,
        tools,
        allow_tools,
        max_output_tokens: 512,
    };
    let body = match wire {
        Wire::Openai => openai::request_body("model-x", &request, true),
        Wire::Anthropic => anthropic::request_body("model-x", &request, true),
    };
    serde_json::from_slice(&body).expect("the request body is JSON")
}

// ---------------------------------------------------------------------------------------
// OpenAI-compatible streams
// ---------------------------------------------------------------------------------------

#[test]
fn openai_parallel_calls_interleaved_by_index_accumulate_separately() {
    let stream = sse(r#"
        data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":null},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_paris","type":"function","function":{"name":"weather__forecast","arguments":""}}]},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_rome","type":"function","function":{"name":"weather__forecast","arguments":""}}]},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"city\":"}}]},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"Rome\"}"}}]},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}

        data: [DONE]
    "#);
    assert_eq!(
        assemble_openai(&stream),
        Ok(calls_reply(
            "tool_calls",
            vec![
                call("call_paris", "weather__forecast", r#"{"city":"Paris"}"#),
                call("call_rome", "weather__forecast", r#"{"city":"Rome"}"#),
            ]
        ))
    );
}

#[test]
fn openai_id_name_and_type_arriving_after_the_first_arguments_join_their_call() {
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"query\":"}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_7","type":"function","function":{"name":"crm__search"}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"acme\"}"}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

        data: [DONE]
    "#);
    assert_eq!(
        assemble_openai(&stream),
        Ok(calls_reply(
            "tool_calls",
            vec![call("call_7", "crm__search", r#"{"query":"acme"}"#)]
        ))
    );
}

#[test]
fn openai_id_name_and_type_repeated_in_every_chunk_are_not_doubled() {
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_7","type":"function","function":{"name":"crm__search","arguments":"{\"query\""}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_7","type":"function","function":{"name":"crm__search","arguments":":\"acme\""}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_7","type":"function","function":{"name":"crm__search","arguments":"}"}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

        data: [DONE]
    "#);
    assert_eq!(
        assemble_openai(&stream),
        Ok(calls_reply(
            "tool_calls",
            vec![call("call_7", "crm__search", r#"{"query":"acme"}"#)]
        ))
    );
}

#[test]
fn openai_calls_without_any_index_are_told_apart_by_their_ids() {
    // Ollama-style: no `index`; a piece without an id, or with the same id, continues
    // the last call, a new id starts one.
    let stream = sse(r#"
        data: {"id":"chatcmpl-3","object":"chat.completion.chunk","model":"qwen3:8b","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_a","type":"function","function":{"name":"weather__forecast","arguments":"{\"city\":"}}]},"finish_reason":null}]}

        data: {"id":"chatcmpl-3","object":"chat.completion.chunk","model":"qwen3:8b","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"\"Paris\"}"}}]},"finish_reason":null}]}

        data: {"id":"chatcmpl-3","object":"chat.completion.chunk","model":"qwen3:8b","choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_b","type":"function","function":{"name":"weather__forecast","arguments":"{\"city\":"}}]},"finish_reason":null}]}

        data: {"id":"chatcmpl-3","object":"chat.completion.chunk","model":"qwen3:8b","choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_b","function":{"arguments":"\"Rome\"}"}}]},"finish_reason":null}]}

        data: {"id":"chatcmpl-3","object":"chat.completion.chunk","model":"qwen3:8b","choices":[{"index":0,"delta":{"content":""},"finish_reason":"tool_calls"}]}

        data: [DONE]
    "#);
    assert_eq!(
        assemble_openai(&stream),
        Ok(calls_reply(
            "tool_calls",
            vec![
                call("call_a", "weather__forecast", r#"{"city":"Paris"}"#),
                call("call_b", "weather__forecast", r#"{"city":"Rome"}"#),
            ]
        ))
    );
}

#[test]
fn openai_index_reused_for_parallel_calls_with_different_ids_gives_separate_calls() {
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"weather__forecast","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"weather__forecast","arguments":"{\"city\":"}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Rome\"}"}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

        data: [DONE]
    "#);
    assert_eq!(
        assemble_openai(&stream),
        Ok(calls_reply(
            "tool_calls",
            vec![
                call("call_a", "weather__forecast", r#"{"city":"Paris"}"#),
                call("call_b", "weather__forecast", r#"{"city":"Rome"}"#),
            ]
        ))
    );
}

#[test]
fn openai_arguments_absent_from_the_first_chunk_come_from_the_later_ones() {
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_7","type":"function","function":{"name":"crm__search"}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"query\":"}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"acme\"}"}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

        data: [DONE]
    "#);
    assert_eq!(
        assemble_openai(&stream),
        Ok(calls_reply(
            "tool_calls",
            vec![call("call_7", "crm__search", r#"{"query":"acme"}"#)]
        ))
    );
}

#[test]
fn openai_call_without_arguments_gets_an_empty_object() {
    // One call never has `arguments`, the other has only `""` (llmock's shape).
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"clock__now"}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"clock__today","arguments":""}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

        data: [DONE]
    "#);
    assert_eq!(
        assemble_openai(&stream),
        Ok(calls_reply(
            "tool_calls",
            vec![
                call("call_1", "clock__now", "{}"),
                call("call_2", "clock__today", "{}")
            ]
        ))
    );
}

#[test]
fn openai_done_without_any_finish_reason_ends_the_reply() {
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" there"},"finish_reason":null}]}

        data: [DONE]
    "#);
    assert_eq!(
        assemble_openai(&stream),
        Ok(ProviderReply {
            text: "Hello there".into(),
            ..ProviderReply::default()
        })
    );
}

#[test]
fn openai_empty_finish_reason_counts_as_no_finish() {
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":""}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":""}]}

        data: [DONE]
    "#);
    assert_eq!(
        assemble_openai(&stream),
        Ok(ProviderReply {
            text: "Hello".into(),
            ..ProviderReply::default()
        })
    );
    // Without `[DONE]`, an empty finish_reason does not end the stream.
    assert!(matches!(
        assemble_openai(cut_before(&stream, "data: [DONE]")),
        Err(ProviderError::Truncated(_))
    ));
}

#[test]
fn openai_finish_reason_stop_despite_tool_calls_keeps_the_calls() {
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"crm__search","arguments":"{\"query\":\"acme\"}"}}]},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

        data: [DONE]
    "#);
    assert_eq!(
        assemble_openai(&stream),
        Ok(calls_reply(
            "stop",
            vec![call("call_1", "crm__search", r#"{"query":"acme"}"#)]
        ))
    );
}

/// A stream whose last chunk before `[DONE]` carries the usage, with `choices` as given.
fn with_usage_chunk(choices: &str) -> Result<ProviderReply, ProviderError> {
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}],"usage":null}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}

        data: {"object":"chat.completion.chunk","choices":CHOICES,"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}

        data: [DONE]
    "#)
    .replace("CHOICES", choices);
    assemble_openai(&stream)
}

fn hi_with_usage() -> ProviderReply {
    ProviderReply {
        text: "Hi".into(),
        finish: Some("stop".into()),
        usage: Usage {
            input_tokens: 12,
            output_tokens: 3,
        },
        ..ProviderReply::default()
    }
}

#[test]
fn openai_usage_chunk_with_empty_choices_is_read() {
    assert_eq!(with_usage_chunk("[]"), Ok(hi_with_usage()));
}

#[test]
fn openai_usage_chunk_with_null_choices_is_read() {
    assert_eq!(with_usage_chunk("null"), Ok(hi_with_usage()));
}

#[test]
fn openai_usage_chunk_with_an_empty_delta_is_read() {
    assert_eq!(with_usage_chunk(r#"[{"delta":{}}]"#), Ok(hi_with_usage()));
}

#[test]
fn openai_stream_ending_with_neither_finish_reason_nor_done_is_truncated() {
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"The forecast"},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" is"},"finish_reason":null}]}
    "#);
    assert!(matches!(
        assemble_openai(&stream),
        Err(ProviderError::Truncated(_))
    ));
}

#[test]
fn openai_stream_ending_mid_line_is_truncated_even_after_a_finish_reason() {
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Done."},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

        data: [DONE]
    "#);
    assert!(assemble_openai(&stream).is_ok());
    let cut_short = cut_before(&stream, "DONE]");
    assert!(matches!(
        assemble_openai(cut_short),
        Err(ProviderError::Truncated(_))
    ));
}

#[test]
fn openai_stream_cut_after_its_finish_reason_without_done_or_usage_is_truncated() {
    // The finish came, then the connection went: the usage the request asked for (what
    // the turn is charged and `max_tokens` counts) never did.
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Done."},"finish_reason":null}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}
    "#);
    assert!(matches!(
        assemble_openai(&stream),
        Err(ProviderError::Truncated(_))
    ));
}

#[test]
fn openai_stream_cut_after_its_usage_chunk_is_whole() {
    let whole = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}

        data: {"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}

        data: [DONE]
    "#);
    let reply = assemble_openai(cut_before(&whole, "data: [DONE]")).unwrap();
    assert_eq!(reply.text, "hi");
    assert_eq!(reply.usage.output_tokens, 1);
}

#[test]
fn openai_usage_on_every_chunk_ends_nothing_before_the_finish() {
    // Some servers send usage with every chunk: a stream cut before its finish is cut off.
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"The forecast"},"finish_reason":null}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" is"},"finish_reason":null}],"usage":{"prompt_tokens":3,"completion_tokens":3,"total_tokens":6}}
    "#);
    assert!(matches!(
        assemble_openai(&stream),
        Err(ProviderError::Truncated(_))
    ));
}

#[test]
fn openai_bare_done_is_no_reply() {
    let stream = sse(r#"
        data: [DONE]
    "#);
    assert!(matches!(
        assemble_openai(&stream),
        Err(ProviderError::Truncated(_))
    ));
}

#[test]
fn openai_chunk_that_is_not_json_is_malformed_not_an_end_of_stream() {
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}

        data: <html><body>502 Bad Gateway</body></html>

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}

        data: [DONE]
    "#);
    assert!(matches!(
        assemble_openai(&stream),
        Err(ProviderError::Malformed(_))
    ));
}

#[test]
fn openai_error_object_in_the_stream_is_malformed() {
    let stream = sse(r#"
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Let me"},"finish_reason":null}]}

        data: {"error":{"message":"Rate limit exceeded: free-models-per-min","code":429}}

        data: [DONE]
    "#);
    match assemble_openai(&stream) {
        Err(ProviderError::Malformed(message)) => {
            assert!(message.contains("Rate limit exceeded"), "{message}")
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

/// A reasoning model's stream (vLLM's `reasoning_content` in pieces) ending in a call
/// as Gemini's OpenAI compatibility sends it: no `index`, an `extra_content` with the
/// thought signature, arguments spaced as the model wrote them.
const REASONING_CALL: &str = r#"
    data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"The user wants"},"finish_reason":null}]}

    data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"reasoning_content":" the forecast","content":null},"finish_reason":null}]}

    data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"reasoning_content":" for Paris.","content":null},"finish_reason":null}]}

    data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"reasoning_content":null,"tool_calls":[{"extra_content":{"google":{"thought_signature":"CiQBjz1rX0sig=="}},"function":{"arguments":"{\"city\": \"Paris\",  \"days\":2}","name":"weather__forecast"},"id":"function-call-1","type":"function"}]},"finish_reason":null}]}

    data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

    data: [DONE]
"#;

const REASONING: &str = "The user wants the forecast for Paris.";
const SPACED_ARGUMENTS: &str = r#"{"city": "Paris",  "days":2}"#;

fn extra_content() -> Value {
    json!({"google": {"thought_signature": "CiQBjz1rX0sig=="}})
}

#[test]
fn openai_reasoning_content_streamed_in_pieces_is_concatenated_into_extra() {
    let reply = assemble_openai(&sse(REASONING_CALL)).unwrap();
    assert_eq!(
        reply.extra,
        object(json!({ "reasoning_content": REASONING }))
    );
    assert_eq!(reply.text, "");
}

#[test]
fn openai_tool_call_extra_content_is_kept_in_the_call() {
    let reply = assemble_openai(&sse(REASONING_CALL)).unwrap();
    let mut expected = call("function-call-1", "weather__forecast", SPACED_ARGUMENTS);
    expected.extra = object(json!({ "extra_content": extra_content() }));
    assert_eq!(reply.tool_calls, [expected]);
}

#[test]
fn openai_request_body_sends_unknown_fields_and_exact_arguments_back() {
    let reply = assemble_openai(&sse(REASONING_CALL)).unwrap();
    let history = [
        Message::user("Weather in Paris?"),
        reply.into_message(Wire::Openai.as_str()),
        tool_result("function-call-1", ToolStatus::Ok, "sunny"),
    ];
    let body = request_json(Wire::Openai, &history, "[]", true);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": "function-call-1",
                    "type": "function",
                    "function": {"name": "weather__forecast", "arguments": SPACED_ARGUMENTS},
                    "extra_content": extra_content(),
                }],
                "reasoning_content": REASONING,
            },
            {"role": "tool", "tool_call_id": "function-call-1", "content": "sunny"},
        ])
    );
}

#[test]
fn openai_text_deltas_reach_the_text_callback_in_order() {
    let stream = sse(r#"
        data: {"id":"chatcmpl-5","object":"chat.completion.chunk","created":1718000000,"model":"llama3","system_fingerprint":null,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-5","object":"chat.completion.chunk","created":1718000000,"model":"llama3","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":"The "},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-5","object":"chat.completion.chunk","created":1718000000,"model":"llama3","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":"forecast "},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-5","object":"chat.completion.chunk","created":1718000000,"model":"llama3","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":"is "},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-5","object":"chat.completion.chunk","created":1718000000,"model":"llama3","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":"sunny ☀"},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-5","object":"chat.completion.chunk","created":1718000000,"model":"llama3","system_fingerprint":null,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}

        data: [DONE]
    "#);
    let (reply, pieces) = assemble::<openai::StreamAssembler>(&stream);
    assert_eq!(pieces, ["The ", "forecast ", "is ", "sunny ☀"]);
    assert_eq!(reply.unwrap().text, "The forecast is sunny ☀");
}

#[test]
fn openai_keep_alive_comments_and_crlf_line_endings_are_ignored() {
    let stream = sse(r#"
        : keep-alive

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}

        : OPENROUTER PROCESSING

        : keep-alive
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" you"},"finish_reason":"stop"}]}

        data: [DONE]
    "#)
    .replace('\n', "\r\n");
    assert_eq!(
        assemble_openai(&stream),
        Ok(ProviderReply {
            text: "Hi you".into(),
            finish: Some("stop".into()),
            ..ProviderReply::default()
        })
    );
}

#[test]
fn openai_non_streamed_tool_call_completion_with_null_content_is_parsed() {
    let body = br#"{"id":"chatcmpl-8","object":"chat.completion","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"crm__search","arguments":"{\"query\":\"acme\"}"}}],"refusal":null},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":80,"completion_tokens":17,"total_tokens":97},"system_fingerprint":"fp_1"}"#;
    assert_eq!(
        openai::parse_reply(body),
        Ok(ProviderReply {
            usage: Usage {
                input_tokens: 80,
                output_tokens: 17,
            },
            ..calls_reply(
                "tool_calls",
                vec![call("call_1", "crm__search", r#"{"query":"acme"}"#)]
            )
        })
    );
}

const OPENAI_CATALOG: &str = r#"[{"type":"function","function":{"name":"weather__forecast","description":"The forecast.","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]"#;

#[test]
fn openai_request_body_sets_tool_choice_none_when_tools_are_not_allowed() {
    let history = [Message::user("Weather?")];
    let body = request_json(Wire::Openai, &history, OPENAI_CATALOG, false);
    assert_eq!(body["tool_choice"], "none");
    let catalog: Value = serde_json::from_str(OPENAI_CATALOG).unwrap();
    assert_eq!(body["tools"], catalog);
    let allowed = request_json(Wire::Openai, &history, OPENAI_CATALOG, true);
    assert_eq!(allowed["tool_choice"], "auto");
}

#[test]
fn openai_request_body_omits_tools_for_an_empty_catalog() {
    let body = request_json(Wire::Openai, &[Message::user("Hi")], "[]", true);
    let body = body.as_object().unwrap();
    assert!(!body.contains_key("tools"), "{body:?}");
    assert!(!body.contains_key("tool_choice"), "{body:?}");
}

// ---------------------------------------------------------------------------------------
// Anthropic streams
// ---------------------------------------------------------------------------------------

/// The shape llmock sends: text, then two tool_use blocks whose input arrives in
/// 12-character `input_json_delta` fragments.
const LLMOCK_CAPTURE: &str = r#"
    event: message_start
    data: {"type":"message_start","message":{"id":"msg_mock_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":42,"output_tokens":1}}}

    event: content_block_start
    data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

    event: ping
    data: {"type":"ping"}

    event: content_block_delta
    data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking "}}

    event: content_block_delta
    data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"both "}}

    event: content_block_delta
    data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"cities."}}

    event: content_block_stop
    data: {"type":"content_block_stop","index":0}

    event: content_block_start
    data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01A","name":"weather__forecast","input":{}}}

    event: content_block_delta
    data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Pa"}}

    event: content_block_delta
    data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ris\"}"}}

    event: content_block_stop
    data: {"type":"content_block_stop","index":1}

    event: content_block_start
    data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01B","name":"weather__forecast","input":{}}}

    event: content_block_delta
    data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Ro"}}

    event: content_block_delta
    data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"me\"}"}}

    event: content_block_stop
    data: {"type":"content_block_stop","index":2}

    event: message_delta
    data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":37}}

    event: message_stop
    data: {"type":"message_stop"}
"#;

#[test]
fn anthropic_text_and_two_tool_uses_assemble_from_the_llmock_capture() {
    let (reply, pieces) = assemble::<anthropic::StreamAssembler>(&sse(LLMOCK_CAPTURE));
    assert_eq!(pieces, ["Checking ", "both ", "cities."]);
    assert_eq!(
        reply,
        Ok(ProviderReply {
            text: "Checking both cities.".into(),
            usage: Usage {
                input_tokens: 42,
                output_tokens: 37,
            },
            ..calls_reply(
                "tool_use",
                vec![
                    call("toolu_01A", "weather__forecast", r#"{"city": "Paris"}"#),
                    call("toolu_01B", "weather__forecast", r#"{"city": "Rome"}"#),
                ]
            )
        })
    );
}

#[test]
fn anthropic_tool_use_without_input_json_delta_takes_its_start_input_or_an_empty_object() {
    let stream = sse(r#"
        event: message_start
        data: {"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":20,"output_tokens":1}}}

        event: content_block_start
        data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01C","name":"clock__now","input":{}}}

        event: content_block_stop
        data: {"type":"content_block_stop","index":0}

        event: content_block_start
        data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01D","name":"clock__today","input":{"tz":"UTC"}}}

        event: content_block_stop
        data: {"type":"content_block_stop","index":1}

        event: message_delta
        data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}

        event: message_stop
        data: {"type":"message_stop"}
    "#);
    let reply = assemble_anthropic(&stream).unwrap();
    assert_eq!(
        reply.tool_calls,
        [
            call("toolu_01C", "clock__now", "{}"),
            call("toolu_01D", "clock__today", r#"{"tz":"UTC"}"#),
        ]
    );
}

#[test]
fn anthropic_thinking_block_is_kept_whole_and_sent_back_first() {
    let stream = sse(r#"
        event: message_start
        data: {"type":"message_start","message":{"id":"msg_3","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":30,"output_tokens":1}}}

        event: content_block_start
        data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Paris, "}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"so the forecast tool."}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}}

        event: content_block_stop
        data: {"type":"content_block_stop","index":0}

        event: content_block_start
        data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Checking."}}

        event: content_block_stop
        data: {"type":"content_block_stop","index":1}

        event: content_block_start
        data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01E","name":"weather__forecast","input":{}}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Paris\"}"}}

        event: content_block_stop
        data: {"type":"content_block_stop","index":2}

        event: message_delta
        data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":50}}

        event: message_stop
        data: {"type":"message_stop"}
    "#);
    let thinking = json!({
        "type": "thinking",
        "thinking": "Paris, so the forecast tool.",
        "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h",
    });
    let reply = assemble_anthropic(&stream).unwrap();
    assert_eq!(
        reply.extra,
        object(json!({ "content_blocks": [thinking.clone()] }))
    );

    let message = reply.into_message(Wire::Anthropic.as_str());
    let Message::Assistant { extra, .. } = &message else {
        panic!("not an assistant message: {message:?}");
    };
    assert_eq!(
        extra,
        &object(json!({ "anthropic": { "content_blocks": [thinking.clone()] } }))
    );

    let history = [Message::user("Weather in Paris?"), message];
    let body = request_json(Wire::Anthropic, &history, "[]", true);
    assert_eq!(
        body["messages"][1],
        json!({
            "role": "assistant",
            "content": [
                thinking,
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_01E", "name": "weather__forecast", "input": {"city": "Paris"}},
            ],
        })
    );
}

#[test]
fn anthropic_stream_without_message_stop_is_truncated() {
    let whole = sse(LLMOCK_CAPTURE);
    assert!(assemble_anthropic(&whole).is_ok());
    assert!(matches!(
        assemble_anthropic(cut_before(&whole, "event: message_stop")),
        Err(ProviderError::Truncated(_))
    ));
}

/// `message_start`'s output count is a placeholder: without a `message_delta` usage, the
/// output is not reported (and the turn charges it at its worst), not 1 token.
#[test]
fn anthropic_output_counted_only_at_message_start_is_not_reported() {
    let stream = sse(r#"
        event: message_start
        data: {"type":"message_start","message":{"id":"msg_7","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}

        event: content_block_start
        data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Sure."}}

        event: message_delta
        data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null}}

        event: message_stop
        data: {"type":"message_stop"}
    "#);
    let reply = assemble_anthropic(&stream).unwrap();
    assert_eq!(
        reply.usage,
        Usage {
            input_tokens: 12,
            output_tokens: 0
        }
    );
}

/// Issue 31 #8: `message_stop` alone, after a `message_start` and nothing else, or after
/// an empty text block, with no `stop_reason`, is no answer: the turn must not end
/// "answered" with nothing said.
#[test]
fn anthropic_stream_that_holds_no_message_is_truncated() {
    let bare = sse(r#"
        event: message_stop
        data: {"type":"message_stop"}
    "#);
    let started_only = sse(r#"
        event: message_start
        data: {"type":"message_start","message":{"id":"msg_5","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}

        event: message_stop
        data: {"type":"message_stop"}
    "#);
    let empty_block = sse(r#"
        event: message_start
        data: {"type":"message_start","message":{"id":"msg_6","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}

        event: content_block_start
        data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

        event: content_block_stop
        data: {"type":"content_block_stop","index":0}

        event: message_stop
        data: {"type":"message_stop"}
    "#);
    for stream in [bare, started_only, empty_block] {
        match assemble_anthropic(&stream) {
            Err(ProviderError::Truncated(message)) => {
                assert!(message.contains("without a reply"), "{message}")
            }
            other => panic!("expected Truncated, got {other:?}"),
        }
    }
}

#[test]
fn anthropic_error_event_is_malformed() {
    let stream = sse(r#"
        event: message_start
        data: {"type":"message_start","message":{"id":"msg_4","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}

        event: content_block_start
        data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Sure"}}

        event: error
        data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}
    "#);
    match assemble_anthropic(&stream) {
        Err(ProviderError::Malformed(message)) => {
            assert!(message.contains("overloaded_error"), "{message}")
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

const ANTHROPIC_CATALOG: &str = r#"[{"name":"weather__forecast","description":"The forecast.","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}]"#;

#[test]
fn anthropic_request_body_merges_tool_results_and_sets_tool_choice_none() {
    let history = [
        Message::user("Weather in Paris and Rome?"),
        Message::assistant(
            "Checking both.".into(),
            vec![
                call("toolu_01A", "weather__forecast", r#"{"city":"Paris"}"#),
                call("toolu_01B", "weather__forecast", r#"{"city":"Rome"}"#),
            ],
            Wire::Anthropic.as_str(),
            Map::new(),
        ),
        tool_result("toolu_01A", ToolStatus::Ok, "sunny"),
        tool_result("toolu_01B", ToolStatus::TimedOut, "the tool timed out"),
    ];
    let body = request_json(Wire::Anthropic, &history, ANTHROPIC_CATALOG, false);
    assert_eq!(body["tool_choice"], json!({"type": "none"}));
    assert_eq!(body["system"], "You are terse.");
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Checking both."},
                {"type": "tool_use", "id": "toolu_01A", "name": "weather__forecast", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_01B", "name": "weather__forecast", "input": {"city": "Rome"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "sunny", "is_error": false},
                {"type": "tool_result", "tool_use_id": "toolu_01B", "content": "the tool timed out", "is_error": true},
            ]},
        ])
    );
    let allowed = request_json(Wire::Anthropic, &history, ANTHROPIC_CATALOG, true);
    assert_eq!(allowed["tool_choice"], json!({"type": "auto"}));
}

#[test]
fn openai_repeated_and_missing_ids_are_made_unique_so_each_answer_names_one_call() {
    let sse = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"dup\",\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"dup\",\"function\":{\"name\":\"b\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":2,\"function\":{\"name\":\"c\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: [DONE]\n\n",
    );
    let reply = assemble_openai(sse).unwrap();
    let ids: Vec<&str> = reply
        .tool_calls
        .iter()
        .map(|call| call.id.as_str())
        .collect();
    assert_eq!(ids, ["dup", "dup_1", "call_2"]);
}

#[test]
fn a_reply_with_more_calls_than_the_engine_answers_is_malformed() {
    let mut sse = String::new();
    for index in 0..=engine_core::provider::MAX_CALLS_PER_REPLY {
        sse += &format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{index},\"id\":\"c{index}\",\"function\":{{\"name\":\"a\",\"arguments\":\"{{}}\"}}}}]}}}}]}}\n\n"
        );
    }
    sse += "data: [DONE]\n\n";
    assert!(matches!(
        assemble_openai(&sse),
        Err(ProviderError::Malformed(_))
    ));
}

#[test]
fn anthropic_blank_text_is_not_sent_as_a_block() {
    let history = [
        Message::user("   "),
        Message::assistant("\n\n".into(), Vec::new(), "anthropic", Default::default()),
        Message::user("Hello"),
    ];
    let request = ProviderRequest {
        system: &[],
        history: &history,
        tools: "[]",
        allow_tools: true,
        max_output_tokens: 16,
    };
    let body: Value =
        serde_json::from_slice(&anthropic::request_body("m", &request, true)).unwrap();
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "Hello"}]}])
    );
}

#[test]
fn openai_choices_other_than_choice_0_are_ignored() {
    let sse = concat!(
        "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"other\"}},{\"index\":0,\"delta\":{\"content\":\"mine\"}}]}\n\n",
        "data: [DONE]\n\n",
    );
    assert_eq!(assemble_openai(sse).unwrap().text, "mine");
}

#[test]
fn openai_pieces_of_several_calls_in_one_chunk_each_join_their_call() {
    let sse = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"function\":{\"name\":\"weather__forecast\",\"arguments\":\"{\\\"city\\\":\"}},{\"index\":1,\"id\":\"call_b\",\"function\":{\"name\":\"clock__today\",\"arguments\":\"{}\"}},{\"index\":2,\"id\":\"call_c\",\"function\":{\"name\":\"clock__today\",\"arguments\":\"\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":2,\"function\":{\"arguments\":\"{\\\"tz\\\":\\\"UTC\\\"}\"}},{\"index\":0,\"function\":{\"arguments\":\"\\\"Rome\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    assert_eq!(
        assemble_openai(sse),
        Ok(calls_reply(
            "tool_calls",
            vec![
                call("call_a", "weather__forecast", r#"{"city":"Rome"}"#),
                call("call_b", "clock__today", "{}"),
                call("call_c", "clock__today", r#"{"tz":"UTC"}"#),
            ]
        ))
    );
}

#[test]
fn openai_non_streamed_completion_reads_choice_0_wherever_it_stands() {
    let body = br#"{"choices":[{"index":1,"message":{"content":"other"},"finish_reason":"stop"},{"index":0,"message":{"content":"mine"},"finish_reason":"stop"}]}"#;
    assert_eq!(openai::parse_reply(body).unwrap().text, "mine");
    // A server that numbers its only choice otherwise still answers with it.
    let body = br#"{"choices":[{"index":3,"message":{"content":"only"},"finish_reason":"stop"}]}"#;
    assert_eq!(openai::parse_reply(body).unwrap().text, "only");
}

#[test]
fn openai_a_chunk_without_choice_0_adds_nothing() {
    let sse = concat!(
        "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"other\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"mine\"}}]}\n\n",
        "data: [DONE]\n\n",
    );
    assert_eq!(assemble_openai(sse).unwrap().text, "mine");
}

#[test]
fn openai_stream_chunk_with_a_null_message_beside_its_delta_is_read() {
    let sse = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"message\":null}]}\n\n",
        "data: [DONE]\n\n",
    );
    assert_eq!(assemble_openai(sse).unwrap().text, "Hi");
}

#[test]
fn openai_non_streamed_completion_with_two_calls_without_index_gives_two_calls() {
    let body = br#"{"choices":[{"index":0,"message":{"content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"a","arguments":"{}"}},{"id":"call_b","type":"function","function":{"name":"b","arguments":"{\"x\":1}"}}]},"finish_reason":"tool_calls"}]}"#;
    assert_eq!(
        openai::parse_reply(body),
        Ok(calls_reply(
            "tool_calls",
            vec![call("call_a", "a", "{}"), call("call_b", "b", r#"{"x":1}"#)]
        ))
    );
}

#[test]
fn ids_made_unique_are_compared_with_the_ones_already_renamed() {
    let sse = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":2,\"id\":\"a_1\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: [DONE]\n\n",
    );
    let reply = assemble_openai(sse).unwrap();
    let ids: Vec<&str> = reply.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["a", "a_1", "a_1_2"]);
}

#[test]
fn a_non_streamed_anthropic_reply_with_more_calls_than_the_engine_answers_is_malformed() {
    let block = r#"{"type":"tool_use","id":"t","name":"f","input":{}}"#;
    let reply = |calls: usize| {
        let blocks = vec![block; calls].join(",");
        format!(r#"{{"content":[{blocks}],"stop_reason":"tool_use"}}"#)
    };
    let most = engine_core::provider::MAX_CALLS_PER_REPLY;
    let answered = anthropic::parse_reply(reply(most).as_bytes()).unwrap();
    assert_eq!(answered.tool_calls.len(), most);
    assert!(matches!(
        anthropic::parse_reply(reply(most + 1).as_bytes()),
        Err(ProviderError::Malformed(_))
    ));
}

#[test]
fn openai_request_body_sends_every_call_of_a_message_in_order() {
    let history = [
        Message::user("Two cities?"),
        Message::assistant(
            String::new(),
            vec![
                call("c1", "weather__forecast", "{}"),
                call("c2", "clock__today", "{}"),
            ],
            "openai",
            Default::default(),
        ),
    ];
    let body = request_json(Wire::Openai, &history, "[]", true);
    let ids: Vec<&str> = body["messages"][2]["tool_calls"]
        .as_array()
        .expect("the assistant message's calls")
        .iter()
        .map(|call| call["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["c1", "c2"]);
}
