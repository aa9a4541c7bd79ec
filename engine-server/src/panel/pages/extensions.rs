//! The extensions directory (seed 000's Extensions tab): each file with its state and
//! error, and the tools it offers; the page follows the directory as it changes (the
//! script polls the admin API; without it, reload the page).

use axum::response::Response;
use maud::html;
use serde_json::Value;

use super::super::locale::Text;
use super::layout::Frame;

pub(crate) fn render(frame: &Frame, status: &Value) -> Response {
    let locale = frame.locale;
    let files = status["files"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let tools = status["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let body = html! {
        @if files.is_empty() {
            p.dim { (locale.text(Text::ExtensionsEmpty)) }
        } @else {
            table #extensions {
                tr {
                    th { (locale.text(Text::File)) }
                    th { (locale.text(Text::State)) }
                    th { (locale.text(Text::Provides)) }
                }
                @for file in files {
                    @let path = file["path"].as_str().unwrap_or_default();
                    @let state = file["state"].as_str().unwrap_or_default();
                    tr.extension data-path=(path) data-state=(state) {
                        td { code { (path) } br; span.dim { (file["kind"].as_str().unwrap_or_default()) } }
                        td {
                            span.tag.(if file["error"].is_null() { "on" } else { "off" }) { (state) }
                            @if let Some(error) = file["error"].as_str() {
                                div.error { (error) }
                            }
                        }
                        td {
                            @for tool in tools.iter().filter(|tool| tool["file"].as_str() == Some(path)) {
                                div { code { (tool["id"].as_str().unwrap_or_default()) } " " span.dim { (tool["description"].as_str().unwrap_or_default().lines().next().unwrap_or_default()) } }
                            }
                        }
                    }
                }
            }
        }
    };
    frame.page(locale.text(Text::Extensions), body)
}
