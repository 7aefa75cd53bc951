//! The expected-results file and the comparison against it.
//!
//! Format: `#` comment lines, then one tab-separated line per schema, sorted:
//! `suite  file  case  status  codes`, where `status` is `ok`, `unsupported:KIND:KEYWORD`,
//! `panic: …` or `unreadable`, and `codes` has one letter per instance (see
//! [`Category::code`]), `.` when the schema has none.

use std::collections::BTreeMap;
use std::path::Path;

use super::{Category, SchemaResult};

/// `(suite, file, case)`.
type Key = (String, String, usize);

/// A schema's recorded results.
#[derive(Clone, PartialEq, Eq)]
pub struct Entry {
    status: String,
    categories: Vec<Category>,
}

/// Every schema's results.
pub struct Table(BTreeMap<Key, Entry>);

const HEADER: &str = "\
# Results of `cargo xtask schema-suites`, the ratchet: a result worse than this fails the
# command, a better one is reported (record it with `cargo xtask schema-suites --update`).
# suite, file, case, schema status, one letter per instance: R right, A right only in any
# property order, U unsupported, V valid but rejected, I invalid but accepted, P panic,
# - unreadable (not counted); `.` for a schema without instances.
";

impl Table {
    /// The table of a run.
    pub fn from_results(results: &[SchemaResult]) -> Table {
        Table(
            results
                .iter()
                .map(|r| {
                    let key = (r.suite.to_owned(), r.file.clone(), r.index);
                    let entry = Entry {
                        status: r.status.clone(),
                        categories: r.categories.clone(),
                    };
                    (key, entry)
                })
                .collect(),
        )
    }

    /// Reads the file; a missing file is an error that says how to create it.
    pub fn read(path: &Path) -> Result<Table, String> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "{}: {e} (create it with `cargo xtask schema-suites --update`)",
                path.display()
            )
        })?;
        let mut table = BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let bad = || format!("{}:{}: malformed line", path.display(), n + 1);
            let fields: Vec<&str> = line.split('\t').collect();
            let [suite, file, case, status, codes] = fields[..] else {
                return Err(bad());
            };
            let categories = if codes == "." {
                Vec::new()
            } else {
                codes
                    .chars()
                    .map(Category::from_code)
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(bad)?
            };
            let case = case.parse().map_err(|_| bad())?;
            table.insert(
                (suite.to_owned(), file.to_owned(), case),
                Entry {
                    status: status.to_owned(),
                    categories,
                },
            );
        }
        Ok(Table(table))
    }

    /// Keeps the schemas of `suite` only.
    pub fn retain_suite(&mut self, suite: &str) {
        self.0.retain(|(s, _, _), _| s == suite);
    }

    /// Writes the file.
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let mut text = HEADER.to_owned();
        for ((suite, file, case), entry) in &self.0 {
            let codes: String = if entry.categories.is_empty() {
                ".".to_owned()
            } else {
                entry.categories.iter().map(|c| c.code()).collect()
            };
            text.push_str(&format!(
                "{suite}\t{file}\t{case}\t{}\t{codes}\n",
                entry.status
            ));
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// What changed between the expected file and this run.
#[derive(Default)]
pub struct Comparison {
    /// Worse results, one line each.
    pub regressions: Vec<String>,
    /// Better results, one line each.
    pub improvements: Vec<String>,
    /// Schemas new in this run.
    pub new: usize,
    /// Other changes (a different refusal reason, the same rank).
    pub changed: usize,
}

/// Compares per instance: worse when the rank drops (right → anything else, anything →
/// accepted-invalid or panic); a schema that compiled and no longer does is worse too, and so
/// is a schema missing from the run or whose instance count changed.
pub fn compare(expected: &Table, current: &Table) -> Comparison {
    let mut out = Comparison::default();
    for (key, old) in &expected.0 {
        let name = format!("{} {} #{}", key.0, key.1, key.2);
        let Some(new) = current.0.get(key) else {
            out.regressions
                .push(format!("{name}: missing from this run"));
            continue;
        };
        if old.categories.len() != new.categories.len() {
            out.regressions.push(format!(
                "{name}: {} instances, expected {} (the data changed: --update)",
                new.categories.len(),
                old.categories.len()
            ));
            continue;
        }
        if old.status == "ok" && new.status != "ok" {
            out.regressions
                .push(format!("{name}: compiled before, now {}", new.status));
        } else if old.status != "ok" && new.status == "ok" {
            out.improvements.push(format!("{name}: compiles now"));
        } else if old.status != new.status {
            out.changed += 1;
        }
        for (i, (&was, &is)) in old.categories.iter().zip(&new.categories).enumerate() {
            let worse = is.rank() < was.rank()
                || (is != was && matches!(is, Category::AcceptedInvalid | Category::Panic));
            if worse {
                out.regressions
                    .push(format!("{name} instance {i}: {was:?} → {is:?}"));
            } else if is.rank() > was.rank() {
                out.improvements
                    .push(format!("{name} instance {i}: {was:?} → {is:?}"));
            } else if is != was {
                out.changed += 1;
            }
        }
    }
    out.new = current
        .0
        .keys()
        .filter(|k| !expected.0.contains_key(*k))
        .count();
    out
}

impl Comparison {
    /// Prints the summary, every regression, and the first improvements.
    pub fn print(&self) {
        println!(
            "ratchet: {} worse, {} better, {} other changes, {} new schemas",
            self.regressions.len(),
            self.improvements.len(),
            self.changed,
            self.new
        );
        for line in &self.regressions {
            println!("  worse: {line}");
        }
        const SHOWN: usize = 20;
        for line in self.improvements.iter().take(SHOWN) {
            println!("  better: {line}");
        }
        if self.improvements.len() > SHOWN {
            println!(
                "  … and {} more better (record them with --update)",
                self.improvements.len() - SHOWN
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[(&str, &str)]) -> Table {
        Table(
            rows.iter()
                .enumerate()
                .map(|(i, (status, codes))| {
                    let categories = codes.chars().filter_map(Category::from_code).collect();
                    let entry = Entry {
                        status: (*status).to_owned(),
                        categories,
                    };
                    (("s".to_owned(), "f".to_owned(), i), entry)
                })
                .collect(),
        )
    }

    #[test]
    fn worse_and_better_are_told_apart() {
        let old = table(&[
            ("ok", "RRV"),
            ("unsupported:Unsupported:not", "UU"),
            ("ok", "R"),
        ]);
        let new = table(&[("ok", "RAR"), ("ok", "RI"), ("unsupported:Limit:fuel", "U")]);
        let comparison = compare(&old, &new);
        // Case 1: U → I is worse; case 2: compiled → not, R → U.
        assert_eq!(
            comparison.regressions.len(),
            3,
            "{:?}",
            comparison.regressions
        );
        // Case 0: V → R; case 1: compiles now, U → R.
        assert_eq!(
            comparison.improvements.len(),
            3,
            "{:?}",
            comparison.improvements
        );
        // Case 0: R → A is a change of the same rank.
        assert_eq!(comparison.changed, 1);
    }

    #[test]
    fn the_file_reads_back() {
        let dir = std::env::temp_dir().join(format!("xtask-ratchet-{}", std::process::id()));
        let path = dir.join("expected.tsv");
        let written = table(&[("ok", "RAUVIP-"), ("unsupported:Invalid:$ref", "")]);
        written.write(&path).unwrap();
        let read = Table::read(&path).unwrap();
        assert!(read.0 == written.0);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
