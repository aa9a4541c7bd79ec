//! A webhook channel, the simplest there is: another service posts a message as JSON to
//! `/channels/webhook` and gets the turn's reply back as JSON.
//!
//! Channels are at plugin API version 0 (**unstable**): this adapter shows the seam, and
//! may need changes in any minor release until a second adapter has been built against it.
//!
//! ```text
//! POST /channels/webhook   {"conversation": "c-1", "from": "u-7", "text": "Hi", "locale": "it-IT",
//!                           "files": [{"name": "a.png", "type": "image/png", "base64": "..."}]}
//! 200 (504, 502, 500 when the turn ended without a reply)
//!                          {"conversation": "c-1", "reply": "...", "stop": "answered",
//!                           "actions": [{"action": "contacts:log_contact", "outcome": "performed"}]}
//! ```

use base64::Engine as _;
use plugin_sdk::channel::{
    Attachment, Channel, ChannelRequest, ChannelResponse, FinishedTurn, Inbound,
};
use serde::Deserialize;
use serde_json::json;

plugin_sdk::plugin! {
    namespace = "webhook",
    engine = ">=0.1, <2",
    api_version = 0,
    display_name = "Webhook",
    description = {
        "en-US": "Runs a turn for each message another service posts as JSON.",
        "it-IT": "Esegue un turno per ogni messaggio che un altro servizio invia in JSON.",
    },
}

/// Messages posted as JSON by another service, answered as JSON.
#[plugin_sdk::define_channel(name = "webhook")]
pub struct Webhook;

/// What the other service posts.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Posted {
    /// Its id for the conversation.
    conversation: String,
    /// Its id for the person writing.
    from: String,
    /// What they wrote.
    text: String,
    /// Their locale, if it knows it.
    #[serde(default)]
    locale: Option<String>,
    /// Files sent with the text, in the service's own words (the engine checks them).
    #[serde(default)]
    files: Vec<File>,
}

/// A file as the other service posts it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    #[serde(rename = "type")]
    media_type: String,
    base64: String,
}

impl Channel for Webhook {
    fn inbound(&self, request: &ChannelRequest) -> Result<Inbound, ChannelResponse> {
        let json = request
            .header("content-type")
            .is_some_and(|kind| kind.starts_with("application/json"));
        if !json {
            return Err(refusal(
                415,
                "post the message as `application/json`".into(),
            ));
        }
        let posted: Posted = serde_json::from_slice(request.body()).map_err(|error| {
            refusal(400, format!("the body is not a webhook message ({error}): send {{\"conversation\", \"from\", \"text\"}}"))
        })?;
        if posted.text.trim().is_empty() {
            return Err(refusal(400, "the `text` is blank".into()));
        }
        let attachments = posted
            .files
            .into_iter()
            .map(|file| {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(&file.base64)
                    .map_err(|_| refusal(400, format!("the file `{}` is not base64", file.name)))?;
                Ok(Attachment {
                    filename: file.name,
                    media_type: file.media_type,
                    bytes,
                })
            })
            .collect::<Result<_, ChannelResponse>>()?;
        Ok(Inbound {
            conversation: posted.conversation,
            subscriber: posted.from,
            message: posted.text,
            locale: posted.locale,
            attachments,
        })
    }

    fn respond(&self, finished: &FinishedTurn) -> ChannelResponse {
        let actions: Vec<_> = finished
            .actions
            .iter()
            .map(|report| json!({ "action": report.action, "outcome": report.outcome }))
            .collect();
        // A turn that ended without a reply is the service's failure to answer, not a
        // success with an empty text.
        let status = match finished.stop.as_str() {
            "deadline" => 504,
            "provider_error" => 502,
            "failed" | "cancelled" => 500,
            _ => 200,
        };
        ChannelResponse::json(
            status,
            &json!({
                "conversation": finished.conversation,
                "reply": finished.reply,
                "stop": finished.stop,
                "actions": actions,
            }),
        )
    }
}

fn refusal(status: u16, message: String) -> ChannelResponse {
    ChannelResponse::json(status, &json!({ "error": message }))
}
