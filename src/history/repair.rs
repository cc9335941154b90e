//! Repairing or rejecting a malformed history (issue 4, "Bad input").
