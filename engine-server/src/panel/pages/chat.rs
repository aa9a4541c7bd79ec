//! Talk to an agent that runs turns (seed 002's panel), as a subscriber: the reply
//! streams from the turn route's NDJSON (the panel's script reads it), each tool call a
//! dim activity line collapsed to its name, with its status and duration once it ends.

use axum::response::Response;
use maud::html;

use super::super::locale::Text;
use super::super::segment;
use super::layout::Frame;

pub(crate) fn render(frame: &Frame, agent: &str, runs_turns: bool) -> Response {
    let locale = frame.locale;
    let title = format!("{agent} · {}", locale.text(Text::Chat));
    let body = html! {
        @if !runs_turns {
            p.dim { (locale.text(Text::NoTurns)) }
        } @else {
            noscript { p.error { (locale.text(Text::ChatNeedsScript)) } }
            div #chat-log .chat-log aria-live="polite" {}
            form.chat-form method="post" action=(format!("/v1/agents/{}/turns", segment(agent))) {
                input type="hidden" name="conversation" value="";
                label { (locale.text(Text::Subscriber)) " "
                    input type="text" name="subscriber" value="panel" size="10" pattern="[A-Za-z0-9._:@-]{1,128}";
                }
                textarea name="message" rows="2" aria-label=(locale.text(Text::Message)) required {}
                button type="submit" { (locale.text(Text::Send)) }
            }
        }
    };
    frame.page(&title, body)
}
