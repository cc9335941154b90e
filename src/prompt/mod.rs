//! Prompt assembly (R2): the layered view of what one call sends, its serializations, and the
//! templates of `prompts/`.

pub mod assemble;
pub mod serialize;
pub mod template;
mod view;

pub use assemble::{Assembly, CallInput, ProjectRules};
pub use view::{Layer, PromptMessage, PromptView, ToolSpec};
