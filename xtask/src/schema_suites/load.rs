//! Reading the three JSON Schema corpora of `shared/data` into jobs: one job per file (a test
//! suite file holds many schemas), each yielding schemas with their labelled instances
//! already serialised the way the runner feeds them to the grammar.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The corpora, in the order they are reported.
pub const SUITES: [&str; 4] = [
    "jsts-draft2020-12",
    "jsts-draft7",
    "schemastore",
    "jsonschemabench",
];

/// A unit of work: one file of a suite (or one SchemaStore schema with its instance folders).
pub struct Job {
    /// Which suite (one of [`SUITES`]).
    pub suite: &'static str,
    /// The name in the ratchet file: the file name, `Collection/name.json`, or the
    /// SchemaStore schema name.
    pub file: String,
    /// The row of the suite's table this job counts in (draft, collection).
    pub group: String,
    kind: JobKind,
}

enum JobKind {
    /// A JSON-Schema-Test-Suite file: `[{description, schema, tests: [{data, valid}]}]`.
    TestSuite(PathBuf),
    /// A SchemaStore schema and its `test/` and `negative_test/` folders.
    SchemaStore {
        schema: PathBuf,
        valid: PathBuf,
        invalid: PathBuf,
    },
    /// A JSONSchemaBench file: `{schema, tests: [{data, valid}]}`.
    Bench(PathBuf),
}

/// One schema with its instances.
pub struct Case {
    /// The schema's index in its file (0 when a file holds one schema).
    pub index: usize,
    /// The case's description (test suite) or empty.
    pub description: String,
    /// The schema, or why it could not be read.
    pub schema: Result<Value, String>,
    /// The instances, in a fixed order.
    pub instances: Vec<Instance>,
}

/// One labelled instance.
pub struct Instance {
    /// Its description (test suite), or its file name (SchemaStore), or empty.
    pub description: String,
    /// `serde_json::to_string` of the instance (compact, key order kept), or why it could not
    /// be read (a YAML or TOML file that does not parse): such instances are skipped.
    pub text: Result<String, String>,
    /// Whether the schema accepts it.
    pub valid: bool,
}

/// Every job of every suite under `shared/data`; a missing corpus is an error.
pub fn jobs(shared: &Path) -> Result<Vec<Job>, String> {
    let data = shared.join("data");
    let mut jobs = Vec::new();
    for (suite, draft) in [
        ("jsts-draft2020-12", "draft2020-12"),
        ("jsts-draft7", "draft7"),
    ] {
        let dir = data.join("json-schema-test-suite/tests").join(draft);
        for path in files(&dir, "json")? {
            jobs.push(Job {
                suite,
                file: file_name(&path),
                group: draft.to_owned(),
                kind: JobKind::TestSuite(path),
            });
        }
    }
    let store = data.join("schemastore");
    for path in files(&store.join("schemas"), "json")? {
        let name = file_name(&path);
        let stem = name.trim_end_matches(".json").to_owned();
        jobs.push(Job {
            suite: "schemastore",
            file: stem.clone(),
            group: "schemastore".to_owned(),
            kind: JobKind::SchemaStore {
                schema: path,
                valid: store.join("test").join(&stem),
                invalid: store.join("negative_test").join(&stem),
            },
        });
    }
    let bench = data.join("jsonschemabench");
    for collection in dirs(&bench)? {
        let group = file_name(&collection);
        for path in files(&collection, "json")? {
            jobs.push(Job {
                suite: "jsonschemabench",
                file: format!("{group}/{}", file_name(&path)),
                group: group.clone(),
                kind: JobKind::Bench(path),
            });
        }
    }
    Ok(jobs)
}

impl Job {
    /// Reads the job's schemas and instances; `Err` when the file itself is unreadable.
    pub fn cases(&self) -> Result<Vec<Case>, String> {
        match &self.kind {
            JobKind::TestSuite(path) => {
                let value = read_json(path)?;
                let dialect = (self.group == "draft7").then_some(DRAFT7);
                let cases = value.as_array().ok_or("not an array of cases")?;
                Ok(cases
                    .iter()
                    .enumerate()
                    .map(|(index, case)| Case {
                        index,
                        description: str_field(case, "description"),
                        schema: case
                            .get("schema")
                            .map(|schema| with_dialect(schema, dialect))
                            .ok_or_else(|| "no schema".to_owned()),
                        instances: labelled(case),
                    })
                    .collect())
            }
            JobKind::Bench(path) => {
                let value = read_json(path)?;
                Ok(vec![Case {
                    index: 0,
                    description: String::new(),
                    schema: value
                        .get("schema")
                        .cloned()
                        .ok_or_else(|| "no schema".to_owned()),
                    instances: labelled(&value),
                }])
            }
            JobKind::SchemaStore {
                schema,
                valid,
                invalid,
            } => {
                let mut instances = Vec::new();
                for (dir, is_valid) in [(valid, true), (invalid, false)] {
                    if !dir.is_dir() {
                        continue;
                    }
                    for path in all_files(dir)? {
                        instances.push(Instance {
                            description: file_name(&path),
                            text: read_instance(&path),
                            valid: is_valid,
                        });
                    }
                }
                Ok(vec![Case {
                    index: 0,
                    description: String::new(),
                    schema: read_json(schema),
                    instances,
                }])
            }
        }
    }
}

/// The draft-07 meta-schema's URI.
const DRAFT7: &str = "http://json-schema.org/draft-07/schema#";

/// The test suite's schemas leave out `$schema`: a runner is to assume the draft of the folder.
/// So draft-07 schemas get `$schema` (keywords like `$ref` mean something else there).
fn with_dialect(schema: &Value, dialect: Option<&str>) -> Value {
    let mut schema = schema.clone();
    if let (Some(dialect), Some(object)) = (dialect, schema.as_object_mut()) {
        if !object.contains_key("$schema") {
            object.insert("$schema".to_owned(), Value::from(dialect));
        }
    }
    schema
}

/// The `tests` array of a case or a bench file.
fn labelled(value: &Value) -> Vec<Instance> {
    let tests = value.get("tests").and_then(Value::as_array);
    tests
        .into_iter()
        .flatten()
        .map(|test| Instance {
            description: str_field(test, "description"),
            text: test
                .get("data")
                .map(|data| serde_json::to_string(data).map_err(|e| e.to_string()))
                .unwrap_or_else(|| Err("no data".to_owned())),
            valid: test.get("valid").and_then(Value::as_bool).unwrap_or(false),
        })
        .collect()
}

fn str_field(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// A SchemaStore instance file as compact JSON: `.json`, `.yaml`/`.yml` (serde_norway) or
/// `.toml` (toml; date-times become their RFC 3339 strings, as SchemaStore's validator sees
/// them).
fn read_instance(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let value: Value = match path.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml") => serde_norway::from_str(&text).map_err(|e| e.to_string())?,
        Some("toml") => {
            let table: toml::Table = toml::from_str(&text).map_err(|e| e.to_string())?;
            toml_to_json(toml::Value::Table(table))
        }
        _ => serde_json::from_str(&text).map_err(|e| e.to_string())?,
    };
    serde_json::to_string(&value).map_err(|e| e.to_string())
}

fn toml_to_json(value: toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(table) => Value::Object(
            table
                .into_iter()
                .map(|(k, v)| (k, toml_to_json(v)))
                .collect(),
        ),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn entries(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let read = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths = read
        .map(|entry| entry.map(|e| e.path()).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    paths.sort();
    Ok(paths)
}

/// The files of `dir` (not its subfolders, so the test suite's `optional/` is left out) with
/// extension `ext`, sorted.
fn files(dir: &Path, ext: &str) -> Result<Vec<PathBuf>, String> {
    Ok(entries(dir)?
        .into_iter()
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == ext))
        .collect())
}

fn dirs(dir: &Path) -> Result<Vec<PathBuf>, String> {
    Ok(entries(dir)?.into_iter().filter(|p| p.is_dir()).collect())
}

/// Every file under `dir`, recursively, sorted.
fn all_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for path in entries(dir)? {
        if path.is_dir() {
            out.extend(all_files(&path)?);
        } else {
            out.push(path);
        }
    }
    Ok(out)
}
