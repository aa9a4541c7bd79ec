//! What every page shares: the head (the embedded stylesheet and script, the CSRF token
//! for the script), the menu (agents, their pages, the extensions, the language
//! switcher, sign-out), and the headers that keep a page from being framed or running
//! any script but the panel's.

use axum::http::header;
use axum::response::{IntoResponse, Response};
use maud::{html, Markup, DOCTYPE};

use super::super::assets::{SCRIPT, STYLESHEET};
use super::super::locale::{Locale, Text, LOCALES};
use super::super::session::{Session, CSRF_FIELD};
use super::super::views::AgentSummary;

/// The page a request is for, and who reads it.
pub(crate) struct Frame<'a> {
    pub(crate) locale: &'a Locale,
    pub(crate) session: Option<&'a Session>,
    /// A write's outcome, shown once (`! ` first: a refusal).
    pub(crate) flash: Option<String>,
    pub(crate) agents: &'a [AgentSummary],
    /// The agent the page is about, and which of its pages.
    pub(crate) current: Place<'a>,
    /// The path and query the page was asked at (the switcher comes back to it).
    pub(crate) here: &'a str,
}

/// Which page the menu marks as the one shown.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place<'a> {
    /// One of an agent's pages.
    Agent(&'a str, Section),
    Extensions,
    /// None of the menu's (a page that says there is no such agent).
    Elsewhere,
}

/// The pages of an agent.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    Tools,
    Chat,
    Knowledge,
    Secrets,
    Conversations,
}

impl Frame<'_> {
    /// The hidden field a form's write needs (none when the page was fetched with the
    /// bearer token, whose writes need no CSRF token).
    pub(crate) fn csrf(&self) -> Markup {
        html! {
            @if let Some(session) = self.session {
                input type="hidden" name=(CSRF_FIELD) value=(&*session.csrf);
            }
        }
    }

    /// The page: `title` and `body` within the menu.
    pub(crate) fn page(&self, title: &str, body: Markup) -> Response {
        let locale = self.locale;
        let link = |agent: &str, section: Section, path: &str, text: Text| {
            let current = self.current == Place::Agent(agent, section);
            html! {
                a href=(format!("/agents/{}/{path}", super::super::segment(agent))) aria-current=[current.then_some("page")] { (locale.text(text)) }
            }
        };
        let body = html! {
            header {
                span.brand { "engine" }
                nav aria-label=(locale.text(Text::Agents)) {
                    @for agent in self.agents {
                        span.agent {
                            strong { (agent.name) } " "
                            (link(&agent.name, Section::Tools, "tools", Text::Tools)) " "
                            (link(&agent.name, Section::Secrets, "secrets", Text::Secrets)) " "
                            @if agent.runs_turns {
                                (link(&agent.name, Section::Chat, "chat", Text::Chat)) " "
                                (link(&agent.name, Section::Conversations, "conversations", Text::Conversations)) " "
                            }
                            @if agent.knowledge { (link(&agent.name, Section::Knowledge, "knowledge", Text::Knowledge)) }
                        }
                    }
                    a href="/extensions" aria-current=[(self.current == Place::Extensions).then_some("page")] { (locale.text(Text::Extensions)) }
                }
                div.end {
                    form.inline method="get" action="/locale" {
                        label { (locale.text(Text::Language)) " "
                            select name="lang" {
                                @for (tag, name) in LOCALES {
                                    option value=(tag) selected[locale.tag() == tag] { (name) }
                                }
                            }
                        }
                        input type="hidden" name="next" value=(self.here);
                        " " button type="submit" { (locale.text(Text::Apply)) }
                    }
                    @if self.session.is_some() {
                        form.inline method="post" action="/logout" {
                            (self.csrf())
                            button type="submit" { (locale.text(Text::SignOut)) }
                        }
                    }
                }
            }
            main data-live=[(self.current == Place::Extensions).then_some("/v1/admin/extensions")] {
                h1 { (title) }
                @if let Some(flash) = &self.flash {
                    @match flash.strip_prefix("! ") {
                        Some(error) => p.flash.error role="alert" { (error) },
                        None => p.flash role="status" { (flash) },
                    }
                }
                (body)
            }
        };
        document(locale, title, self.session, body)
    }
}

/// A page outside the menu (the login form).
pub(crate) fn bare(locale: &Locale, title: &str, body: Markup) -> Response {
    document(locale, title, None, html! { main { (body) } })
}

fn document(locale: &Locale, title: &str, session: Option<&Session>, body: Markup) -> Response {
    let markup = html! {
        (DOCTYPE)
        html lang=(locale.tag()) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                @if let Some(session) = session { meta name="csrf" content=(&*session.csrf); }
                title { (title) " · engine" }
                link rel="stylesheet" href=(STYLESHEET);
                script src=(SCRIPT) defer {}
            }
            body { (body) }
        }
    };
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
            ),
            (header::X_FRAME_OPTIONS, "DENY"),
            (header::REFERRER_POLICY, "same-origin"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        markup.into_string(),
    )
        .into_response()
}
