//! Model access, through a provider double on a real socket: by tier, metered per turn,
//! stopped at the tool's deadline and on cancellation.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_core::{Call, CallErrorKind, Engine};
use serde_json::{json, Value};

use crate::support::{call, engine, in_conversation};

/// A model provider double: OpenAI's chat completions wire format on a real socket.
/// Each answer costs 1,000 input and 1,000 output tokens; "slow" makes it wait.
async fn provider() -> (String, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post({
            let seen = Arc::clone(&seen);
            move |axum::Json(body): axum::Json<Value>| async move {
                seen.lock().unwrap().push(body.clone());
                let question = body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned();
                if question.contains("slow") {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                }
                axum::Json(json!({
                    "model": body["model"],
                    "choices": [{ "message": { "role": "assistant", "content": format!("answer to {question}") } }],
                    "usage": { "prompt_tokens": 1000, "completion_tokens": 1000 },
                }))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

fn model_engine(url: &str) -> Engine {
    // `[gateway]`: the engine talks to the provider over HTTP.
    engine(&format!(
        "[gateway]\nbase_url = {url:?}\ntiers.fast = {{ model = \"tiny\", usd_per_million_input = 1.0, usd_per_million_output = 1.0 }}\n\
         [agents.thinker]\nmodel = {{ spend_cap_usd = 0.005 }}\n[agents.plain]\n"
    ))
}

#[tokio::test]
async fn model_calls_go_by_tier_through_the_gateway_and_stop_at_the_turns_spend_cap() {
    let (url, seen) = provider().await;
    let engine = model_engine(&url);
    let turn = in_conversation(&engine, "thinker", "s", "c");
    for question in ["one", "two", "three"] {
        let answer = call(&engine, &turn, "ctx__ask", json!({ "text": question }))
            .await
            .unwrap();
        assert_eq!(answer, format!("answer to {question}"));
    }
    // $0.002 a call against a $0.005 cap: the third crossed it, the fourth is refused.
    let refused = call(&engine, &turn, "ctx__ask", json!({ "text": "four" }))
        .await
        .expect_err("over the cap");
    assert!(
        refused.message().contains("spend cap is reached"),
        "{}",
        refused.message()
    );
    let calls = turn.spend().calls();
    assert_eq!(calls.len(), 3);
    assert!(calls.iter().all(|call| call.model == "tiny"
        && call.tool == "ctx:ask"
        && (call.cost_usd - 0.002).abs() < 1e-9));
    // The provider got the tier's model, never a name from the tool.
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0]["model"], "tiny");
    assert_eq!(
        requests[0]["messages"][0],
        json!({ "role": "system", "content": "Answer briefly." })
    );
    // A new turn has a new budget.
    let next = in_conversation(&engine, "thinker", "s", "c");
    assert!(call(&engine, &next, "ctx__ask", json!({ "text": "five" }))
        .await
        .is_ok());
    // Without the grant, the tool gets no model.
    let plain = engine.turn("plain").unwrap();
    assert_eq!(
        call(&engine, &plain, "ctx__ask", json!({ "text": "x" }))
            .await
            .unwrap(),
        "no model access"
    );
}

#[tokio::test]
async fn a_model_call_stops_at_the_tools_deadline_and_on_cancellation() {
    let (url, _) = provider().await;
    let engine = model_engine(&url);
    let turn = in_conversation(&engine, "thinker", "s", "c");
    let arguments = json!({ "text": "slow" }).to_string();
    let deadline = tokio::time::Instant::now() + Duration::from_millis(200);
    let late = engine
        .call(&turn, Call::new("ctx__ask", &arguments).deadline(deadline))
        .await;
    // The dispatch and the model call watch the same deadline and token: whichever
    // notices first, the call ends there, and nothing is spent.
    let late = late.expect_err("stopped");
    assert!(
        late.kind() == CallErrorKind::TimedOut
            || late.message().contains("passed the tool's deadline"),
        "{late:?}"
    );
    let token = engine_core::CancellationToken::new();
    let cancel = {
        let token = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            token.cancel();
        })
    };
    let cancelled = engine
        .call(&turn, Call::new("ctx__ask", &arguments).cancel_on(&token))
        .await;
    cancel.await.unwrap();
    let cancelled = cancelled.expect_err("stopped");
    assert!(
        cancelled.kind() == CallErrorKind::Cancelled
            || cancelled.message().contains("was cancelled"),
        "{cancelled:?}"
    );
    assert!(turn.spend().calls().is_empty(), "nothing was spent");
}
