//! `@path` mentions (R7.1) and file freshness (R7.2).
