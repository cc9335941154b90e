//! Preparing LLM calls in each serialization, compacting spans, the state board and compressing
//! tool outputs: the `ContextEngine` methods around the prompt.

use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::ContextEngine;
use super::convert::{from_js, js, to_js_value};
use super::error::to_js_error;
use super::host::JsHost;
use crate::compress::{ToolOutput, compress_tool_output};
use crate::engine::Engine;
use crate::error::Error;
use crate::js_forms::{PreparedCall, PromptFormat, ToolOutputInput};
use crate::prompt::{Assembly, CallInput};
use crate::workbench::StateDelta;

fn format_from_js(value: JsValue) -> Result<PromptFormat, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(PromptFormat::Openai);
    }
    from_js(value, "format (openai, anthropic or react)")
}

fn input_from_js(value: JsValue) -> Result<CallInput, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(CallInput::default());
    }
    from_js(value, "call input")
}

impl ContextEngine {
    /// A promise of the call `prepare` assembles from `input`, its request in `format`; bad
    /// arguments reject it before anything is prepared.
    fn prepare_with<F>(
        &self,
        input: JsValue,
        format: JsValue,
        prepare: impl FnOnce(Rc<Engine<JsHost>>, CallInput) -> F + 'static,
    ) -> Promise
    where
        F: Future<Output = crate::error::Result<Assembly>> + 'static,
    {
        let engine = Rc::clone(&self.engine);
        let parsed = input_from_js(input).and_then(|i| Ok((i, format_from_js(format)?)));
        future_to_promise(async move {
            let (input, format) = parsed?;
            let assembly = prepare(engine, input).await.map_err(to_js_error)?;
            to_js_value(&PreparedCall::new(&assembly, format))
        })
    }
}

#[wasm_bindgen]
impl ContextEngine {
    /// Assemble the next call's prompt (R2): compaction when due, the plan and board in the
    /// tail. Resolves to the assembly with `request` in `format` (`openai` by default,
    /// `anthropic`, or `react` text).
    #[wasm_bindgen(js_name = prepareCall, unchecked_return_type = "Promise<PreparedCall>")]
    pub fn prepare_call(
        &self,
        #[wasm_bindgen(unchecked_param_type = "CallInput | undefined")] input: JsValue,
        #[wasm_bindgen(unchecked_param_type = "PromptFormat | undefined")] format: JsValue,
    ) -> Promise {
        self.prepare_with(input, format, |engine, input| async move { engine.prepare_call(&input).await })
    }

    /// The prompt for a branch's next call (the project's rules, its mission, messages and own
    /// plan).
    #[wasm_bindgen(js_name = prepareBranchCall, unchecked_return_type = "Promise<PreparedCall>")]
    pub fn prepare_branch_call(
        &self,
        branch: String,
        #[wasm_bindgen(unchecked_param_type = "CallInput | undefined")] input: JsValue,
        #[wasm_bindgen(unchecked_param_type = "PromptFormat | undefined")] format: JsValue,
    ) -> Promise {
        self.prepare_with(
            input,
            format,
            |engine, input| async move { engine.prepare_branch_call(&branch, &input).await },
        )
    }

    /// Compact an ended span now, wherever it lies (R5.7, R5.9): the rewrite with its cost.
    #[wasm_bindgen(js_name = compactSpan, unchecked_return_type = "Promise<RewriteRecord>")]
    pub fn compact_span(&self, id: String) -> Promise {
        self.promise(|engine| async move { engine.compact_span(&id).await })
    }

    /// Compact the uncompacted tail now, on request (R5.4): the rewrite with its cost; an
    /// `invalid_input` error when the tail holds nothing to compact.
    #[wasm_bindgen(js_name = compactTail, unchecked_return_type = "Promise<RewriteRecord>")]
    pub fn compact_tail(&self) -> Promise {
        self.promise(|engine| async move { engine.compact_tail().await })
    }

    /// The state board after every delta so far (R5.2).
    #[wasm_bindgen(js_name = stateBoard, unchecked_return_type = "StateBoard")]
    pub fn state_board(&self) -> Result<JsValue, JsValue> {
        to_js_value(&self.engine.state_board())
    }

    /// Apply a STATE_DELTA: evidence checked, appended to history (R5.3, R5.6).
    #[wasm_bindgen(js_name = updateState, unchecked_return_type = "StateUpdate")]
    pub fn update_state(
        &self,
        #[wasm_bindgen(unchecked_param_type = "StateDelta")] delta: JsValue,
    ) -> Result<JsValue, JsValue> {
        let delta: StateDelta = from_js(delta, "state delta")?;
        to_js_value(&js(self.engine.update_state(delta))?)
    }

    /// Ask the host's LLM for a STATE_DELTA over the uncompacted tail and apply it.
    #[wasm_bindgen(js_name = requestStateUpdate, unchecked_return_type = "Promise<StateUpdate>")]
    pub fn request_state_update(&self) -> Promise {
        self.promise(|engine| async move { engine.request_state_update().await })
    }

    /// The history form of one tool output (R3): never fails on the output itself; says what
    /// it dropped and where the original is (`raw_id`).
    #[wasm_bindgen(js_name = compressToolOutput, unchecked_return_type = "Compressed")]
    pub fn compress_tool_output(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ToolOutputInput")] output: JsValue,
    ) -> Result<JsValue, JsValue> {
        let input: ToolOutputInput = from_js(output, "tool output")?;
        if input.tool.trim().is_empty() {
            return Err(to_js_error(Error::InvalidInput("tool output: `tool` names the tool".into())));
        }
        let output = ToolOutput {
            tool: &input.tool,
            arguments: &input.arguments,
            output: &input.output,
            stderr: input.stderr.as_deref(),
            exit_code: input.exit_code,
            is_error: input.is_error,
            raw_id: &input.raw_id,
            original: None,
            focus: &[],
        };
        let config = self.engine.config();
        to_js_value(&compress_tool_output(&output, &config.compress, &self.engine.counter()))
    }
}
