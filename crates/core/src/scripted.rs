//! A scripted model for tests and examples: plays given replies in order and records what it was asked.

use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use crate::history::{estimate_tokens, message_tokens};
use crate::model::{Model, ModelError, ModelRequest, ModelResponse, Usage};

#[derive(Debug, Default)]
struct Script {
    responses: Vec<ModelResponse>,
    cycle: bool,
    recording: bool,
    served: usize,
    requests: Vec<ModelRequest>,
}

/// A [`Model`] that replies from a script.
///
/// Replies whose usage is zero get an estimate (about four characters per token of the request and the
/// reply), so that token budgets behave as with a real provider. When the script runs out the call fails
/// with a clear error, unless the script was made with [`ScriptedModel::cycle`].
///
/// ```
/// use steward_core::{Model, ModelRequest, ModelResponse, ScriptedModel};
/// # tokio_test_block_on(async {
/// let model = ScriptedModel::new([ModelResponse::text("Hello!")]);
/// let reply = model.complete(&ModelRequest::new(vec![], vec![].into())).await.unwrap();
/// assert_eq!(reply.content.as_deref(), Some("Hello!"));
/// assert_eq!(model.requests().len(), 1);
/// # });
/// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Debug)]
pub struct ScriptedModel {
    name: String,
    script: Mutex<Script>,
}

impl ScriptedModel {
    /// A model that plays `responses` once, in order.
    pub fn new(responses: impl IntoIterator<Item = ModelResponse>) -> Self {
        Self {
            name: "scripted".to_owned(),
            script: Mutex::new(Script {
                responses: responses.into_iter().collect(),
                cycle: false,
                recording: true,
                ..Script::default()
            }),
        }
    }

    /// A model that plays `responses` in order, over and over.
    pub fn cycle(responses: impl IntoIterator<Item = ModelResponse>) -> Self {
        let model = Self::new(responses);
        model.lock().cycle = true;
        model
    }

    /// The same model without keeping the requests it gets (for long runs and benchmarks).
    pub fn without_recording(self) -> Self {
        self.lock().recording = false;
        self
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.lock().requests.clone()
    }

    /// How many replies were played.
    pub fn served(&self) -> usize {
        self.lock().served
    }

    fn lock(&self) -> MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl Model for ScriptedModel {
    fn name(&self) -> &str {
        &self.name
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let mut script = self.lock();
        if script.recording {
            script.requests.push(request.clone());
        }
        let len = script.responses.len();
        let index = if script.cycle && len > 0 {
            script.served % len
        } else {
            script.served
        };
        let Some(mut response) = script.responses.get(index).cloned() else {
            return Err(ModelError::Other(format!(
                "the scripted model has no reply left: its script had {len} and all were played"
            )));
        };
        script.served += 1;
        if response.usage.is_zero() {
            response.usage = estimate_usage(request, &response);
        }
        Ok(response)
    }
}

fn estimate_usage(request: &ModelRequest, response: &ModelResponse) -> Usage {
    let input: usize = request.messages.iter().map(message_tokens).sum::<usize>()
        + request
            .tools
            .iter()
            .map(|t| estimate_tokens(&t.description) + estimate_tokens(&t.parameters.to_string()))
            .sum::<usize>();
    let output = response.content.as_deref().map_or(0, estimate_tokens)
        + response
            .tool_calls
            .iter()
            .map(|c| estimate_tokens(&c.name) + estimate_tokens(&c.arguments))
            .sum::<usize>();
    Usage {
        input_tokens: input as u64,
        output_tokens: output as u64,
    }
}
