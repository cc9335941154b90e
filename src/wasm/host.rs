//! `JsHost`: a duck-typed JS object whose methods return Promises (or plain values).

use js_sys::{Array, Function, Promise, Reflect};
use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::error::host_error_from_js;
use crate::host::{
    Completion, CompletionRequest, DirEntry, FileContent, FileStat, Host, HostError, HostErrorKind, Progress,
};

#[derive(Clone)]
pub struct JsHost {
    object: JsValue,
}

/// The methods a JS host object must have (see the `Host` interface in the generated `.d.ts`).
pub const REQUIRED_METHODS: [&str; 9] =
    ["complete", "readFile", "stat", "writeFile", "appendFile", "rename", "remove", "listDir", "nowMs"];

impl JsHost {
    /// Wrap `object`, checking up front that every required method is there.
    pub fn new(object: JsValue) -> Result<Self, HostError> {
        if !object.is_object() {
            return Err(HostError::new(HostErrorKind::Failed, "the host must be an object with the Host methods"));
        }
        let host = JsHost { object };
        let missing: Vec<&str> = REQUIRED_METHODS.into_iter().filter(|m| host.method(m).is_err()).collect();
        if !missing.is_empty() {
            return Err(HostError::new(
                HostErrorKind::Failed,
                format!("the host object lacks: {}", missing.join(", ")),
            ));
        }
        Ok(host)
    }

    fn method(&self, name: &str) -> Result<Function, HostError> {
        Reflect::get(&self.object, &name.into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
            .ok_or_else(|| HostError::new(HostErrorKind::Failed, format!("host.{name} is not a function")))
    }

    /// Call `name(args…)` and await its result, whether it returns a Promise or a value.
    async fn call(&self, name: &str, args: &[JsValue]) -> Result<JsValue, HostError> {
        let function = self.method(name)?;
        let returned =
            function.apply(&self.object, &args.iter().collect::<Array>()).map_err(|e| host_error_from_js(name, &e))?;
        JsFuture::from(Promise::resolve(&returned)).await.map_err(|e| host_error_from_js(name, &e))
    }

    async fn call_as<T: DeserializeOwned>(&self, name: &str, args: &[JsValue]) -> Result<T, HostError> {
        let value = self.call(name, args).await?;
        serde_wasm_bindgen::from_value(value).map_err(|e| {
            HostError::new(HostErrorKind::Failed, format!("host.{name} returned an unexpected value: {e}"))
        })
    }
}

/// Plain JS objects (not `Map`s) for everything the engine hands to the host.
pub fn to_js<T: Serialize>(value: &T) -> Result<JsValue, HostError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| HostError::new(HostErrorKind::Failed, format!("cannot convert to JS: {e}")))
}

impl Host for JsHost {
    async fn complete(&self, request: CompletionRequest) -> Result<Completion, HostError> {
        self.call_as("complete", &[to_js(&request)?]).await
    }

    async fn read_file(&self, path: &str) -> Result<FileContent, HostError> {
        self.call_as("readFile", &[path.into()]).await
    }

    async fn stat(&self, path: &str) -> Result<Option<FileStat>, HostError> {
        self.call_as("stat", &[path.into()]).await
    }

    async fn write_file(&self, path: &str, data: &str) -> Result<(), HostError> {
        self.call("writeFile", &[path.into(), data.into()]).await.map(drop)
    }

    async fn append_file(&self, path: &str, data: &str) -> Result<(), HostError> {
        self.call("appendFile", &[path.into(), data.into()]).await.map(drop)
    }

    async fn rename(&self, from: &str, to: &str) -> Result<(), HostError> {
        self.call("rename", &[from.into(), to.into()]).await.map(drop)
    }

    async fn remove(&self, path: &str) -> Result<(), HostError> {
        self.call("remove", &[path.into()]).await.map(drop)
    }

    async fn list_dir(&self, path: &str) -> Result<Vec<DirEntry>, HostError> {
        self.call_as("listDir", &[path.into()]).await
    }

    /// `tryLock` is optional on a JS host: without it every lock is taken.
    async fn try_lock(&self, path: &str) -> Result<bool, HostError> {
        if self.method("tryLock").is_err() {
            return Ok(true);
        }
        self.call_as("tryLock", &[path.into()]).await
    }

    /// `unlock` is optional on a JS host.
    async fn unlock(&self, path: &str) -> Result<(), HostError> {
        if self.method("unlock").is_err() {
            return Ok(());
        }
        self.call("unlock", &[path.into()]).await.map(drop)
    }

    /// `progress` is optional on a JS host; one that throws is ignored.
    fn progress(&self, update: &Progress) {
        if let (Ok(f), Ok(value)) = (self.method("progress"), to_js(update)) {
            let _ = f.call1(&self.object, &value);
        }
    }

    /// `event` is optional on a JS host; one that throws is ignored.
    fn event(&self, event: &crate::goals::Event) {
        if let (Ok(f), Ok(value)) = (self.method("event"), to_js(event)) {
            let _ = f.call1(&self.object, &value);
        }
    }

    /// A host clock that throws or returns a non-number reads as 0 rather than failing the call.
    fn now_ms(&self) -> u64 {
        let now = self.method("nowMs").ok().and_then(|f| f.call0(&self.object).ok()).and_then(|v| v.as_f64());
        now.filter(|n| n.is_finite() && *n >= 0.0).map_or(0, |n| n as u64)
    }
}
