//! Loading a grammar file and running it through the stages, with errors rendered against the
//! source (`file:line:col: message`, the line, a caret).

use std::path::Path;

use clap::ValueEnum;
use sieve_diagnostics::SourceFile;
use sieve_ir::Grammar;

/// The kinds of grammar file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// llama.cpp GBNF.
    Gbnf,
    /// XGrammar EBNF (read by the same front-end as GBNF).
    Ebnf,
    /// A regular expression; the whole file (less a final newline) is the pattern.
    Regex,
}

impl Format {
    /// The format named by a file's extension.
    pub fn from_path(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()? {
            "gbnf" => Some(Format::Gbnf),
            "ebnf" => Some(Format::Ebnf),
            "regex" => Some(Format::Regex),
            _ => None,
        }
    }
}

/// How to run the pipeline.
#[derive(Clone)]
pub struct PipelineOptions {
    /// The format, or `None` to take it from the extension.
    pub format: Option<Format>,
    /// The root rule of GBNF/EBNF grammars.
    pub root: String,
    /// Normalisation settings.
    pub normalize: sieve_normalize::Config,
}

/// A grammar file read into memory.
pub struct Loaded {
    /// The path as the user wrote it.
    pub name: String,
    /// The file's text.
    pub text: String,
    /// Its format.
    pub format: Format,
}

/// Reads `path`; an unreadable file or an unknown extension is a usage error.
pub fn load(path: &Path, options: &PipelineOptions) -> Result<Loaded, String> {
    let name = path.display().to_string();
    let format = options
        .format
        .or_else(|| Format::from_path(path))
        .ok_or_else(|| {
            format!(
                "{name}: unknown grammar format; use a .gbnf, .ebnf or .regex file, or --format"
            )
        })?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    Ok(Loaded { name, text, format })
}

/// Errors rendered for the user, one block each.
pub struct Diagnostics(pub Vec<String>);

/// Runs the front-end for the file's format.
pub fn front_end(loaded: &Loaded, options: &PipelineOptions) -> Result<Grammar, Diagnostics> {
    let source = SourceFile::new(&loaded.name, &loaded.text);
    match loaded.format {
        Format::Gbnf | Format::Ebnf => {
            let gbnf_options = sieve_gbnf::Options::with_root(options.root.clone());
            sieve_gbnf::compile(&loaded.text, &gbnf_options).map_err(|errors| {
                Diagnostics(
                    errors
                        .as_slice()
                        .iter()
                        .map(|e| source.render_error(e))
                        .collect(),
                )
            })
        }
        Format::Regex => {
            let pattern = loaded.text.strip_suffix('\n').unwrap_or(&loaded.text);
            let pattern = pattern.strip_suffix('\r').unwrap_or(pattern);
            sieve_regex::compile(pattern, &sieve_regex::Options::default())
                .map_err(|e| Diagnostics(vec![source.render_error(&e)]))
        }
    }
}

/// Runs the normalisation passes.
pub fn normalize(
    loaded: &Loaded,
    grammar: &Grammar,
    options: &PipelineOptions,
) -> Result<Grammar, Diagnostics> {
    sieve_normalize::normalize(grammar, &options.normalize)
        .map_err(|e| Diagnostics(vec![format!("{}: {e}\n", loaded.name)]))
}

/// Builds the per-rule automata.
pub fn automata(loaded: &Loaded, grammar: &Grammar) -> Result<sieve_fsm::GrammarFsms, Diagnostics> {
    sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(grammar)
        .map_err(|e| Diagnostics(vec![format!("{}: {e}\n", loaded.name)]))
}

/// Where a constraint comes from on the command line: a grammar file or a regex pattern.
pub struct Constraint<'a> {
    /// `--grammar FILE`.
    pub grammar: Option<&'a Path>,
    /// `--regex PATTERN`.
    pub regex: Option<&'a str>,
}

/// Reads and compiles the constraint through the front-end; usage errors as `Err(String)`,
/// grammar errors as diagnostics.
pub fn constraint(
    constraint: &Constraint<'_>,
    options: &PipelineOptions,
) -> Result<Result<Grammar, Diagnostics>, String> {
    let loaded = match (constraint.grammar, constraint.regex) {
        (Some(path), None) => load(path, options)?,
        (None, Some(pattern)) => Loaded {
            name: "<regex>".to_owned(),
            text: pattern.to_owned(),
            format: Format::Regex,
        },
        _ => return Err("give exactly one of --grammar FILE and --regex PATTERN".to_owned()),
    };
    Ok(front_end(&loaded, options))
}
