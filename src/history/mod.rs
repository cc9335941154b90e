//! History management (R4, R7): rounds, repair of malformed histories, `@file` mentions and
//! file freshness.

pub mod mentions;
pub mod repair;
