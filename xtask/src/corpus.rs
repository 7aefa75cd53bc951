//! Runs over corpora written by others, kept outside the repository in `../shared`.
//!
//! Today: every `.gbnf` grammar under `shared/data/grammars` must compile through every stage
//! (front-end, normalisation, automata). The table printed is the pass rate; any failure, or a
//! missing corpus, makes the command fail.

use std::path::{Path, PathBuf};

fn gbnf_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            gbnf_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "gbnf") {
            out.push(path);
        }
    }
    Ok(())
}

/// Compiles one grammar through every stage; the summary or the rendered errors.
fn compile(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let name = path.display().to_string();
    let source = sieve_diagnostics::SourceFile::new(&name, &text);
    let parsed = sieve_gbnf::compile(&text, &sieve_gbnf::Options::default()).map_err(|errors| {
        errors
            .as_slice()
            .iter()
            .map(|e| source.render_error(e))
            .collect::<String>()
    })?;
    let normalized = sieve_normalize::normalize(&parsed, &sieve_normalize::Config::default())
        .map_err(|e| e.to_string())?;
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(&normalized)
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "{} rules, {} normalised, {} FSM states",
        parsed.rules().len(),
        normalized.rules().len(),
        fsms.state_count()
    ))
}

/// Checks every GBNF grammar of the shared corpus.
pub fn run(shared: &Path) -> Result<(), String> {
    let dir = shared.join("data/grammars");
    if !dir.is_dir() {
        return Err(format!(
            "corpus missing: {} does not exist (pass the shared folder as an argument)",
            dir.display()
        ));
    }
    let mut files = Vec::new();
    gbnf_files(&dir, &mut files)?;
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "corpus missing: no .gbnf file under {}",
            dir.display()
        ));
    }
    let mut failures = 0;
    println!("GBNF grammars under {}:", dir.display());
    for file in &files {
        let shown = file.strip_prefix(&dir).unwrap_or(file).display();
        match compile(file) {
            Ok(summary) => println!("  ok    {shown}: {summary}"),
            Err(errors) => {
                failures += 1;
                println!("  FAIL  {shown}\n{errors}");
            }
        }
    }
    println!("{} passed, {} failed", files.len() - failures, failures);
    if failures > 0 {
        return Err(format!("{failures} grammar(s) failed"));
    }
    Ok(())
}
