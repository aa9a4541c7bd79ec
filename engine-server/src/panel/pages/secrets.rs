//! An agent's secrets as fields (seed 003's requiredSecrets panel): each secret a
//! linked tool or hook declares, with its label and description in the reader's
//! locale, its type (`password` masked, `text`, `select` with its choices as written),
//! and where the agent's value comes from. Setting one is write-only: no page shows a
//! value, and a variable in the environment still wins (the page says so).

use axum::response::Response;
use maud::{html, Markup};

use super::super::locale::Text;
use super::super::segment;
use super::super::views::SecretSource;
use super::super::views::{AgentSecrets, SecretField};
use super::layout::Frame;

pub(crate) fn render(frame: &Frame, secrets: &AgentSecrets) -> Response {
    let locale = frame.locale;
    let title = format!("{} · {}", secrets.agent, locale.text(Text::Secrets));
    let body = html! {
        @if !secrets.editable {
            p.dim { (locale.text(Text::SecretsNotEditable)) }
        }
        @if secrets.secrets.is_empty() {
            p.dim { (locale.text(Text::SecretsNone)) }
        }
        @for secret in &secrets.secrets {
            (field(frame, secrets, secret))
        }
    };
    frame.page(&title, body)
}

fn field(frame: &Frame, secrets: &AgentSecrets, secret: &SecretField) -> Markup {
    let locale = frame.locale;
    let action = format!(
        "/v1/admin/agents/{}/secrets/{}",
        segment(&secrets.agent),
        segment(secret.spec.key)
    );
    let back = format!("/agents/{}/secrets", segment(&secrets.agent));
    let id = format!("secret-{}", secret.spec.key);
    let (state, class) = match secret.source {
        SecretSource::Environment => (Text::SourceEnvironment, "on"),
        SecretSource::Panel => (Text::SourcePanel, "on"),
        SecretSource::File => (Text::SourceFile, "on"),
        SecretSource::Unset => (Text::SecretUnset, "off"),
    };
    html! {
        section.plugin.secret data-key=(secret.spec.key) data-source=(secret.source.as_str()) {
            h2 { label for=(id) { (secret.spec.label) } " " code.dim { (secret.spec.key) } }
            p { (secret.spec.description) }
            p.dim {
                span.tag.(class) { (locale.text(state)) } " "
                (locale.text(Text::DeclaredBy)) ": "
                @for (index, owner) in secret.declared_by.iter().enumerate() {
                    @if index > 0 { ", " }
                    code { (owner) }
                }
            }
            @if secrets.editable {
                form method="post" action=(action) autocomplete="off" {
                    (frame.csrf())
                    input type="hidden" name="back" value=(back);
                    @match secret.spec.kind {
                        "select" => {
                            select #(id) name="value" required {
                                @for choice in secret.spec.choices { option value=(choice) { (choice) } }
                            }
                        },
                        "text" => { input #(id) type="text" name="value" required; },
                        _ => { input #(id) type="password" name="value" required autocomplete="new-password"; },
                    }
                    " " button type="submit" { (locale.text(Text::Save)) }
                }
                @if secret.source == SecretSource::Panel {
                    form.inline method="post" action=(action) {
                        (frame.csrf())
                        input type="hidden" name="back" value=(back);
                        input type="hidden" name="clear" value="true";
                        button.danger type="submit" { (locale.text(Text::Clear)) }
                    }
                }
            }
        }
    }
}
