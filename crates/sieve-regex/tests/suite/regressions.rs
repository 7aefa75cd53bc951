//! Inputs found by fuzzing (`fuzz/fuzz_targets/regex.rs`), each a plain test with a comment
//! saying what went wrong.
