//! An agent's tools (seed 003's Tools section): by plugin and category, each with its
//! summary, annotations, secrets and whether the agent equips it (else why not), with a
//! switch that enables it or not; then the agent's hooks.

use axum::response::Response;
use maud::{html, Markup};

use super::super::locale::Text;
use super::super::segment;
use super::super::views::{AgentTools, ToolView};
use super::layout::Frame;

pub(crate) fn render(frame: &Frame, tools: &AgentTools) -> Response {
    let locale = frame.locale;
    let title = format!("{} · {}", tools.agent, locale.text(Text::Tools));
    let switches = format!("/v1/admin/agents/{}/tools", segment(&tools.agent));
    let here = format!("/agents/{}/tools", segment(&tools.agent));
    let plugins = html! {
        @for plugin in &tools.plugins {
            section.plugin id=(format!("plugin-{}", plugin.namespace)) {
                h2 { (plugin.display_name) " " span.dim { (plugin.package) " " (plugin.version) } }
                @if let Some(description) = plugin.description { p { (description) } }
                @for category in &plugin.categories {
                    h3 { (category.name) }
                    table {
                        @for tool in &category.tools { (row(frame, tools, tool)) }
                    }
                }
            }
        }
    };
    let body = html! {
        @if tools.editable {
            // One form for every switch: each button sends its tool.
            form #switches method="post" action=(switches) {
                (frame.csrf())
                input type="hidden" name="back" value=(here);
                (plugins)
            }
        } @else {
            p.dim { (locale.text(Text::ConfigNotEditable)) }
            (plugins)
        }
        h2 { (locale.text(Text::Hooks)) }
        @if tools.hooks.is_empty() {
            p.dim { (locale.text(Text::HooksNone)) }
        } @else {
            table #hooks {
                @for hook in &tools.hooks {
                    tr {
                        td { code { (hook.event) } }
                        td { (hook.position) }
                        td { code { (hook.id) } }
                        td { (hook.summary) }
                        td.dim { (hook.timeout_ms) " ms" @if hook.mutates_response { ", " (locale.text(Text::MutatesResponse)) } }
                    }
                }
            }
        }
    };
    frame.page(&title, body)
}

fn row(frame: &Frame, tools: &AgentTools, tool: &ToolView) -> Markup {
    let locale = frame.locale;
    html! {
        tr.tool data-tool=(tool.id) {
            td {
                code { (tool.id) }
                br;
                span.summary { (tool.summary) }
                @for reason in &tool.left_out {
                    div.reason { (locale.text(Text::LeftOut)) ": " (reason) }
                }
                @for secret in &tool.secrets {
                    div.dim {
                        (locale.text(Text::Secrets)) ": " strong { (secret.spec.label) } " "
                        span.tag { (secret.spec.kind) @if !secret.spec.choices.is_empty() { ": " (secret.spec.choices.join(", ")) } }
                        span.tag.(if secret.set { "on" } else { "off" }) {
                            (locale.text(if secret.set { Text::SecretSet } else { Text::SecretUnset }))
                        }
                        " " (secret.spec.description)
                    }
                }
            }
            td {
                @for annotation in &tool.annotations {
                    span.tag { (locale.text(annotation_text(annotation))) }
                }
                @match tool.kind {
                    "staged_action" => span.tag { (locale.text(Text::StagedAction)) },
                    "conversation" => span.tag { (locale.text(Text::InConversation)) },
                    _ => {},
                }
            }
            td.state {
                @if tool.equipped {
                    span.tag.on { (locale.text(Text::Equipped)) }
                } @else if tool.enabled {
                    span.tag.off { (locale.text(Text::LeftOut)) }
                } @else {
                    span.tag { (locale.text(Text::Disabled)) }
                }
            }
            @if tools.editable {
                td {
                    button.switch type="submit" name=(if tool.enabled { "disable" } else { "enable" }) value=(tool.id) aria-pressed=(tool.enabled) {
                        (locale.text(if tool.enabled { Text::Disable } else { Text::Enable }))
                    }
                }
            }
        }
    }
}

fn annotation_text(annotation: &str) -> Text {
    match annotation {
        "read_only" => Text::ReadOnly,
        "destructive" => Text::Destructive,
        "idempotent" => Text::Idempotent,
        _ => Text::OpenWorld,
    }
}
