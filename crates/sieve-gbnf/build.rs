//! Generates the LR(1) parser from `src/grammar.lalrpop` into `OUT_DIR` (as `grammar.rs`).

fn main() {
    lalrpop::Configuration::new()
        .use_cargo_dir_conventions()
        .emit_rerun_directives(true)
        .process()
        .expect("src/grammar.lalrpop is a valid LALRPOP grammar");
}
