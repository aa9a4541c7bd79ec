//! Reading a streamed chat completion: our splitter and assembler against async-openai's
//! way (eventsource-stream's splitter, then each chunk into its typed
//! `CreateChatCompletionStreamResponse`, then the text and the tool calls put together by
//! index, as every user of it writes), on the same bytes, cut as a network delivers them.

use async_openai::types::chat::CreateChatCompletionStreamResponse;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use engine_core::provider::openai::StreamAssembler;
use engine_core::provider::SseSplitter;
use futures::StreamExt;

/// A realistic answer: 300 text pieces, then three parallel tool calls whose arguments
/// come in 20 pieces each, the finish, the usage chunk and `[DONE]`.
fn stream() -> Vec<u8> {
    let chunk = |delta: &str, finish: &str| {
        format!(
            "data: {{\"id\":\"chatcmpl-B1\",\"object\":\"chat.completion.chunk\",\"created\":1764500000,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_1\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"logprobs\":null,\"finish_reason\":{finish}}}],\"usage\":null}}\n\n"
        )
    };
    let mut sse = chunk(r#"{"role":"assistant","content":""}"#, "null");
    for piece in 0..300 {
        sse += &chunk(&format!(r#"{{"content":" word{piece}"}}"#), "null");
    }
    for call in 0..3 {
        sse += &chunk(
            &format!(
                r#"{{"tool_calls":[{{"index":{call},"id":"call_{call}","type":"function","function":{{"name":"weather","arguments":""}}}}]}}"#
            ),
            "null",
        );
        for piece in 0..20 {
            sse += &chunk(
                &format!(
                    r#"{{"tool_calls":[{{"index":{call},"function":{{"arguments":"{{\"k{piece}\":{piece},"}}}}]}}"#
                ),
                "null",
            );
        }
    }
    sse += &chunk("{}", "\"tool_calls\"");
    sse += "data: {\"id\":\"chatcmpl-B1\",\"object\":\"chat.completion.chunk\",\"created\":1764500000,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":400,\"total_tokens\":520}}\n\n";
    sse += "data: [DONE]\n\n";
    sse.into_bytes()
}

/// The stream as a network delivers it: 1,400-byte pieces.
fn pieces(sse: &[u8]) -> Vec<bytes::Bytes> {
    sse.chunks(1400)
        .map(bytes::Bytes::copy_from_slice)
        .collect()
}

fn ours(pieces: &[bytes::Bytes]) -> (usize, usize) {
    let mut splitter = SseSplitter::default();
    let mut assembler = StreamAssembler::default();
    let mut text = |_: &str| {};
    let mut on_event = |_: &str, data: &str| assembler.event(data, &mut text);
    for piece in pieces {
        splitter.feed(piece, &mut on_event).expect("a valid stream");
    }
    splitter.finish(&mut on_event).expect("a valid stream");
    let reply = assembler.finish().expect("a complete stream");
    (reply.text.len(), reply.tool_calls.len())
}

/// What an async-openai user writes to get the same reply.
fn async_openai(pieces: Vec<bytes::Bytes>) -> (usize, usize) {
    let bytes = futures::stream::iter(pieces.into_iter().map(Ok::<_, std::io::Error>));
    let mut events = eventsource_stream::EventStream::new(bytes);
    let mut text = String::new();
    let mut calls: Vec<(String, String, String)> = Vec::new();
    futures::executor::block_on(async {
        while let Some(event) = events.next().await {
            let event = event.expect("a valid stream");
            if event.data == "[DONE]" {
                break;
            }
            let chunk: CreateChatCompletionStreamResponse =
                serde_json::from_str(&event.data).expect("a chunk");
            for choice in chunk.choices {
                if let Some(content) = choice.delta.content {
                    text.push_str(&content);
                }
                for call in choice.delta.tool_calls.into_iter().flatten() {
                    let at = call.index as usize;
                    if calls.len() <= at {
                        calls.resize_with(at + 1, Default::default);
                    }
                    let entry = &mut calls[at];
                    if let Some(id) = call.id {
                        entry.0 = id;
                    }
                    if let Some(function) = call.function {
                        if let Some(name) = function.name {
                            entry.1 = name;
                        }
                        if let Some(arguments) = function.arguments {
                            entry.2.push_str(&arguments);
                        }
                    }
                }
            }
        }
    });
    (text.len(), calls.len())
}

fn sse(c: &mut Criterion) {
    let sse = stream();
    let pieces = pieces(&sse);
    assert_eq!(
        ours(&pieces),
        async_openai(pieces.clone()),
        "the same reply"
    );
    let mut group = c.benchmark_group("sse_assembly");
    group.throughput(Throughput::Bytes(sse.len() as u64));
    group.bench_function("engine", |b| b.iter(|| ours(&pieces)));
    group.bench_function("async_openai", |b| {
        b.iter_batched(|| pieces.clone(), async_openai, BatchSize::SmallInput)
    });
    group.finish();
}

criterion_group!(benches, sse);
criterion_main!(benches);
