//! `/login` (the form that takes the server's token, and its answer) and `/logout`: open
//! routes, since the form is how a browser gets past the guard ([`session`]).
//!
//! [`session`]: super::super::session

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::{Form, Router};
use serde::Deserialize;

use super::super::local_path;
use super::super::locale::{Locale, Text};
use super::super::session::{checked_csrf, Sessions};
use crate::bearer::Bearer;
use crate::cookies;

/// `/login` (the form, and its answer) and `/logout`, open: the form is how a browser
/// gets past the guard.
pub(crate) fn router(sessions: Arc<Sessions>, bearer: Option<Bearer>) -> Router {
    Router::new()
        .route("/login", get(login_form).post(login))
        .route("/logout", axum::routing::post(logout))
        .with_state(Login { sessions, bearer })
}

#[derive(Clone)]
struct Login {
    sessions: Arc<Sessions>,
    bearer: Option<Bearer>,
}

#[derive(Deserialize)]
struct LoginQuery {
    #[serde(default)]
    next: Option<String>,
}

#[derive(Deserialize)]
struct Credentials {
    token: String,
    #[serde(default)]
    next: Option<String>,
}

async fn login_form(
    State(login): State<Login>,
    locale: Locale,
    axum::extract::Query(query): axum::extract::Query<LoginQuery>,
) -> Response {
    if login.bearer.is_none() {
        return Redirect::to("/").into_response();
    }
    login_page(
        &locale,
        local_path(query.next.as_deref()),
        None,
        StatusCode::OK,
    )
}

fn login_page(locale: &Locale, next: &str, error: Option<&str>, status: StatusCode) -> Response {
    let body = maud::html! {
        form.login method="post" action="/login" {
            h1 { (locale.text(Text::SignIn)) }
            @if let Some(error) = error {
                p.error role="alert" { (error) }
            }
            label for="token" { (locale.text(Text::Token)) }
            input #token type="password" name="token" autocomplete="current-password" required autofocus;
            input type="hidden" name="next" value=(next);
            button type="submit" { (locale.text(Text::SignIn)) }
        }
    };
    (
        status,
        super::layout::bare(locale, locale.text(Text::SignIn), body),
    )
        .into_response()
}

async fn login(
    State(login): State<Login>,
    locale: Locale,
    headers: HeaderMap,
    form: Result<Form<Credentials>, axum::extract::rejection::FormRejection>,
) -> Response {
    let Some(bearer) = &login.bearer else {
        return Redirect::to("/").into_response();
    };
    let Ok(Form(credentials)) = form else {
        return login_page(
            &locale,
            "/",
            Some(locale.text(Text::TokenRefused)),
            StatusCode::BAD_REQUEST,
        );
    };
    let next = local_path(credentials.next.as_deref());
    if !bearer.admits_token(credentials.token.as_bytes()) {
        return login_page(
            &locale,
            next,
            Some(locale.text(Text::TokenRefused)),
            StatusCode::UNAUTHORIZED,
        );
    }
    let (id, _) = login.sessions.start();
    let cookie = cookies::set_cookie(&headers, &login.sessions.cookie, &id, None);
    let mut response = Redirect::to(next).into_response();
    response.headers_mut().insert(header::SET_COOKIE, cookie);
    response
}

/// Ends the session (the form carries its CSRF token: another site cannot sign a
/// person out).
async fn logout(State(login): State<Login>, request: Request) -> Response {
    let Some(session) = login.sessions.find(request.headers()) else {
        return Redirect::to("/login").into_response();
    };
    let request = match checked_csrf(&session, request).await {
        Ok(request) => request,
        Err(refused) => return refused,
    };
    login.sessions.end(&session);
    let cookie = cookies::set_cookie(request.headers(), &login.sessions.cookie, "", Some(0));
    let mut response = Redirect::to("/login").into_response();
    response.headers_mut().insert(header::SET_COOKIE, cookie);
    response
}
