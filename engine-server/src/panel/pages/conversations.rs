//! An agent's recent conversations, and each one's history: its messages a page at a
//! time (a long conversation stays quick to open), the tool calls and answers collapsed
//! as in the chat, its turns (how each ended, usage, cost) and its staged actions with
//! their outcomes.

use axum::response::Response;
use engine_core::stores::ConversationPage;
use maud::{html, Markup};
use serde_json::Value;

use super::super::locale::Text;
use super::super::segment;
use super::layout::Frame;

pub(crate) fn list(frame: &Frame, agent: &str, page: Result<ConversationPage, String>) -> Response {
    let locale = frame.locale;
    let title = format!("{agent} · {}", locale.text(Text::Conversations));
    let here = format!("/agents/{}/conversations", segment(agent));
    let body = html! {
        @match &page {
            Err(error) => p.error { (error) },
            Ok(page) => {
                @if page.conversations.is_empty() { p.dim { (locale.text(Text::ConversationsNone)) } }
                @else {
                    table #conversations {
                        tr {
                            th { (locale.text(Text::Conversation)) } th { (locale.text(Text::Subscriber)) }
                            th { (locale.text(Text::Turns)) } th { (locale.text(Text::Messages)) } th { (locale.text(Text::Cost)) }
                        }
                        @for conversation in &page.conversations {
                            tr.conversation data-id=(conversation.id) {
                                td { a href=(format!("{here}/{}", segment(&conversation.id))) { code { (conversation.id) } } }
                                td { (conversation.subscriber) }
                                td { (conversation.turns) }
                                td { (conversation.messages) }
                                td { "$" (format!("{:.4}", conversation.cost_usd)) }
                            }
                        }
                    }
                }
                @if let Some(next) = &page.next {
                    p { a href=(format!("{here}?after={}", segment(&next.to_string()))) { (locale.text(Text::More)) " →" } }
                }
            }
        }
    };
    frame.page(&title, body)
}

pub(crate) fn history(
    frame: &Frame,
    agent: &str,
    id: &str,
    history: Result<Value, String>,
    limit: usize,
) -> Response {
    let locale = frame.locale;
    let title = format!("{agent} · {id}");
    let here = format!("/agents/{}/conversations/{}", segment(agent), segment(id));
    let body = html! {
        @match &history {
            Err(error) => p.error { (error) },
            Ok(history) => {
                @let total = history["total"].as_u64().unwrap_or_default() as usize;
                @let offset = history["offset"].as_u64().unwrap_or_default() as usize;
                @let messages = history["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
                p.dim {
                    (locale.text(Text::Subscriber)) ": " (history["subscriber"].as_str().unwrap_or_default()) " · "
                    (locale.text(Text::Messages)) " " (offset + 1) "–" (offset + messages.len()) " / " (total)
                }
                nav.pages {
                    @if offset > 0 {
                        a href=(format!("{here}?offset={}&limit={limit}", offset.saturating_sub(limit))) { "← " (locale.text(Text::Older)) } " "
                    }
                    @if offset + messages.len() < total {
                        a href=(format!("{here}?offset={}&limit={limit}", offset + messages.len())) { (locale.text(Text::Newer)) " →" }
                    }
                }
                div.chat-log #history {
                    @for message in messages { (message_markup(frame, message)) }
                }
                h2 { (locale.text(Text::Turns)) }
                table #turns {
                    tr { th { "#" } th { (locale.text(Text::Stop)) } th { (locale.text(Text::Usage)) } th { (locale.text(Text::Cost)) } }
                    @for (index, turn) in history["turns"].as_array().map(Vec::as_slice).unwrap_or_default().iter().enumerate() {
                        tr.turn {
                            td { (index + 1) }
                            td { (stop_reason(turn["stop"].as_str().unwrap_or_default())) }
                            td { (turn["usage"]["input_tokens"].as_u64().unwrap_or_default()) " " (locale.text(Text::TokensIn)) " · " (turn["usage"]["output_tokens"].as_u64().unwrap_or_default()) " " (locale.text(Text::TokensOut)) " · " (turn["model_requests"].as_u64().unwrap_or_default()) " " (locale.text(Text::Requests)) }
                            td { "$" (format!("{:.4}", turn["cost_usd"].as_f64().unwrap_or_default())) }
                        }
                    }
                }
                @let actions = history["actions"].as_array().map(Vec::as_slice).unwrap_or_default();
                @if !actions.is_empty() {
                    h2 { (locale.text(Text::Actions)) }
                    table #actions {
                        @for action in actions {
                            tr.action {
                                td { code { (action["action"].as_str().unwrap_or_default()) } }
                                td { span.tag { (action["state"].as_str().unwrap_or_default()) } }
                                td.dim { (action["detail"].as_str().unwrap_or_default()) }
                            }
                        }
                    }
                }
            }
        }
    };
    frame.page(&title, body)
}

/// How a turn ended, from its stop record (`{"reason":"answered"}`).
fn stop_reason(stop: &str) -> String {
    serde_json::from_str::<Value>(stop)
        .ok()
        .and_then(|stop| stop["reason"].as_str().map(str::to_owned))
        .unwrap_or_else(|| stop.to_owned())
}

fn message_markup(frame: &Frame, message: &Value) -> Markup {
    let locale = frame.locale;
    let content = message["content"].as_str().unwrap_or_default();
    html! {
        @match message["role"].as_str().unwrap_or_default() {
            "user" => div.user { (content) },
            "assistant" => {
                @if !content.is_empty() { div.reply { (content) } }
                @for call in message["tool_calls"].as_array().map(Vec::as_slice).unwrap_or_default() {
                    details.activity {
                        summary { span.name { (call["name"].as_str().unwrap_or_default()) } " " span.dim { (locale.text(Text::Call)) } }
                        pre.arguments { (call["arguments"].as_str().unwrap_or_default()) }
                    }
                }
            },
            _ => {
                @let status = message["status"].as_str().unwrap_or_default();
                details.activity {
                    summary { span.name { (message["name"].as_str().unwrap_or_default()) } " " span.status.(status) { (status) } }
                    pre { (content) }
                }
            },
        }
    }
}
