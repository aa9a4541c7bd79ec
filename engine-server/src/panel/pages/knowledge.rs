//! An agent's knowledge base (seed 003: the panel's Knowledge tab): its documents with
//! their origin, a page at a time; upload a text or Markdown file, delete one, search,
//! and wipe them all once the agent's name is typed again.

use axum::response::Response;
use maud::html;
use serde_json::Value;

use super::super::locale::Text;
use super::super::segment;
use super::layout::Frame;

pub(crate) fn render(
    frame: &Frame,
    agent: &str,
    answer: Result<Value, String>,
    query: Option<&str>,
) -> Response {
    let locale = frame.locale;
    let title = format!("{agent} · {}", locale.text(Text::Knowledge));
    let base = format!("/v1/admin/agents/{}/knowledge", segment(agent));
    let here = format!("/agents/{}/knowledge", segment(agent));
    let body = html! {
        @match &answer {
            Err(error) => p.error { (error) },
            Ok(page) => {
                form method="get" action=(here) role="search" {
                    input type="search" name="q" value=[query] aria-label=(locale.text(Text::Search));
                    " " button type="submit" { (locale.text(Text::Search)) }
                }
                form method="post" action=(base) enctype="multipart/form-data" {
                    (frame.csrf())
                    input type="hidden" name="back" value=(here);
                    label { (locale.text(Text::UploadHint)) " "
                        input type="file" name="file" accept=".txt,.md,.markdown,text/plain,text/markdown" required;
                    }
                    " " button type="submit" { (locale.text(Text::Upload)) }
                }
                @if let Some(hits) = page["hits"].as_array() {
                    h2 { (locale.text(Text::Search)) ": " (query.unwrap_or_default()) }
                    @if hits.is_empty() { p.dim { (locale.text(Text::NoDocuments)) } }
                    table #hits {
                        @for hit in hits {
                            tr.hit { td { (hit["filename"].as_str().unwrap_or_default()) } td.dim { (hit["snippet"].as_str().unwrap_or_default()) } }
                        }
                    }
                }
                @if let Some(documents) = page["documents"].as_array() {
                    h2 { (locale.text(Text::Documents)) }
                    @if documents.is_empty() { p.dim { (locale.text(Text::NoDocuments)) } }
                    @else {
                        table #documents {
                            tr { th { (locale.text(Text::Name)) } th { (locale.text(Text::Origin)) } th { (locale.text(Text::Size)) } th {} }
                            @for document in documents {
                                @let id = document["id"].as_i64().unwrap_or_default();
                                tr.document data-id=(id) {
                                    td.filename { (document["filename"].as_str().unwrap_or_default()) }
                                    td { (document["origin"].as_str().unwrap_or_default()) ": " (document["origin_ref"].as_str().unwrap_or_default()) }
                                    td { (document["size"].as_u64().unwrap_or_default()) " B" }
                                    td {
                                        form.inline method="post" action=(format!("{base}/{id}/delete")) {
                                            (frame.csrf())
                                            input type="hidden" name="back" value=(here);
                                            button.danger type="submit" { (locale.text(Text::Delete)) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    @if let Some(next) = page["next"].as_str() {
                        p { a href=(format!("{here}?after={}", segment(next))) { (locale.text(Text::More)) " →" } }
                    }
                    h2 { (locale.text(Text::Wipe)) }
                    form method="post" action=(format!("{base}/wipe")) {
                        (frame.csrf())
                        input type="hidden" name="back" value=(here);
                        label { (locale.text(Text::WipeConfirm)) " (" code { (agent) } ") "
                            input type="text" name="confirm" required autocomplete="off";
                        }
                        " " button.danger type="submit" { (locale.text(Text::Wipe)) }
                    }
                }
            }
        }
    };
    frame.page(&title, body)
}
