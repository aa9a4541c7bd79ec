//! The HTTP half of the OAuth broker's flow, on the `oauth2` crate over the engine's own
//! reqwest: the sign-in URL with PKCE (S256), the code's exchange, the refresh. Token
//! requests follow no redirect and give up after a bound: an endpoint cannot send the
//! client's secret elsewhere, nor hold a tool's call.

use std::time::Duration;

use engine_core::oauth::{now_secs, FlowError, OAuthClient, OAuthFlow, Tokens};
use oauth2::basic::{BasicClient, BasicErrorResponseType};
use oauth2::{
    AsyncHttpClient, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet,
    EndpointSet, HttpRequest, HttpResponse, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl,
    RefreshToken, RequestTokenError, Scope, TokenResponse, TokenUrl,
};
use plugin_sdk::engine::BoxFuture;

/// The most of a token endpoint's answer read: a token response is a few KiB.
const MAX_TOKEN_RESPONSE_BYTES: usize = 64 * 1024;

/// The most a token request takes.
const TOKEN_REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// The flow on its own client.
pub struct OAuth2Flow {
    http: reqwest::Client,
}

impl Default for OAuth2Flow {
    fn default() -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(TOKEN_REQUEST_TIMEOUT)
            .build()
            .expect("a client with rustls builds");
        Self { http }
    }
}

type Configured =
    BasicClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

/// `client` as the crate's client, coming back to `redirect_uri` when one is given.
fn configured(client: &OAuthClient, redirect_uri: Option<&str>) -> Result<Configured, String> {
    let invalid =
        |what: &str, error: oauth2::url::ParseError| format!("the {what} is not a URL: {error}");
    let configured = BasicClient::new(ClientId::new(client.client_id.clone()))
        .set_client_secret(ClientSecret::new(client.client_secret.clone()))
        .set_auth_uri(
            AuthUrl::new(client.authorize_url.clone())
                .map_err(|error| invalid("authorization URL", error))?,
        )
        .set_token_uri(
            TokenUrl::new(client.token_url.clone()).map_err(|error| invalid("token URL", error))?,
        );
    Ok(match redirect_uri {
        Some(uri) => configured.set_redirect_uri(
            RedirectUrl::new(uri.to_owned()).map_err(|error| invalid("redirect URI", error))?,
        ),
        None => configured,
    })
}

/// Our client, as the crate sends its requests.
struct Sender(reqwest::Client);

impl<'c> AsyncHttpClient<'c> for Sender {
    type Error = reqwest::Error;
    type Future = BoxFuture<'c, Result<HttpResponse, reqwest::Error>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(send(self.0.clone(), request))
    }
}

/// Sends one of the crate's requests on `http`, reading at most [`MAX_TOKEN_RESPONSE_BYTES`]
/// of the answer (more is cut, and fails to parse).
async fn send(http: reqwest::Client, request: HttpRequest) -> Result<HttpResponse, reqwest::Error> {
    let (parts, body) = request.into_parts();
    let mut built = http.request(parts.method, parts.uri.to_string()).body(body);
    for (name, value) in &parts.headers {
        built = built.header(name, value);
    }
    let mut response = built.send().await?;
    let mut answer = oauth2::http::Response::builder().status(response.status());
    for (name, value) in response.headers() {
        answer = answer.header(name, value);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = MAX_TOKEN_RESPONSE_BYTES.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if room <= chunk.len() {
            break;
        }
    }
    Ok(answer
        .body(body)
        .expect("a status and headers from a response"))
}

/// What a token endpoint's answer gives the broker.
fn tokens(response: &impl TokenResponse) -> Tokens {
    Tokens {
        access_token: response.access_token().secret().clone(),
        refresh_token: response.refresh_token().map(|token| token.secret().clone()),
        expires_at: response.expires_in().map(|within| {
            now_secs().saturating_add(i64::try_from(within.as_secs()).unwrap_or(i64::MAX))
        }),
    }
}

/// A failed token request as the broker reads it: `invalid_grant` is the grant gone.
fn flow_error<E: std::error::Error>(
    error: RequestTokenError<E, oauth2::StandardErrorResponse<BasicErrorResponseType>>,
) -> FlowError {
    match error {
        RequestTokenError::ServerResponse(response)
            if *response.error() == BasicErrorResponseType::InvalidGrant =>
        {
            FlowError::InvalidGrant
        }
        // The provider's words, never a token: an error response carries none.
        RequestTokenError::ServerResponse(response) => FlowError::Failed(format!(
            "the token endpoint answered `{}`",
            response.error().as_ref()
        )),
        RequestTokenError::Request(error) => {
            FlowError::Failed(format!("the token endpoint could not be reached: {error}"))
        }
        RequestTokenError::Parse(error, _) => FlowError::Failed(format!(
            "the token endpoint's answer is not a token response: {error}"
        )),
        RequestTokenError::Other(error) => FlowError::Failed(error),
    }
}

impl OAuthFlow for OAuth2Flow {
    fn authorize(
        &self,
        client: &OAuthClient,
        redirect_uri: &str,
        state: &str,
    ) -> Result<(String, String), String> {
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let state = state.to_owned();
        let (url, _) = configured(client, Some(redirect_uri))?
            .authorize_url(move || CsrfToken::new(state))
            .add_scopes(client.scopes.iter().cloned().map(Scope::new))
            .set_pkce_challenge(challenge)
            .url();
        Ok((url.to_string(), verifier.secret().clone()))
    }

    fn exchange<'a>(
        &'a self,
        client: &'a OAuthClient,
        redirect_uri: &'a str,
        code: &'a str,
        verifier: &'a str,
    ) -> BoxFuture<'a, Result<Tokens, FlowError>> {
        Box::pin(async move {
            let configured = configured(client, Some(redirect_uri)).map_err(FlowError::Failed)?;
            let response = configured
                .exchange_code(AuthorizationCode::new(code.to_owned()))
                .set_pkce_verifier(PkceCodeVerifier::new(verifier.to_owned()))
                .request_async(&Sender(self.http.clone()))
                .await
                .map_err(flow_error)?;
            Ok(tokens(&response))
        })
    }

    fn refresh<'a>(
        &'a self,
        client: &'a OAuthClient,
        refresh_token: &'a str,
    ) -> BoxFuture<'a, Result<Tokens, FlowError>> {
        Box::pin(async move {
            let configured = configured(client, None).map_err(FlowError::Failed)?;
            let refresh_token = RefreshToken::new(refresh_token.to_owned());
            let response = configured
                .exchange_refresh_token(&refresh_token)
                .request_async(&Sender(self.http.clone()))
                .await
                .map_err(flow_error)?;
            Ok(tokens(&response))
        })
    }
}
