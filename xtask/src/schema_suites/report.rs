//! The printed report: a table per suite, the most common refusals, llguidance's figures on
//! the same data, and the slowest schemas.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::Value;

use super::load::SUITES;
use super::{Category, Counts, SchemaResult};

/// A table per suite: a row per group (draft, collection) and a total.
pub fn tables(results: &[SchemaResult]) {
    for suite in SUITES {
        if !results.iter().any(|r| r.suite == suite) {
            continue;
        }
        let mut groups: BTreeMap<&str, Counts> = BTreeMap::new();
        let mut total = Counts::default();
        let mut refusals: HashMap<&str, usize> = HashMap::new();
        for result in results.iter().filter(|r| r.suite == suite) {
            groups.entry(&result.group).or_default().add(result);
            total.add(result);
            if result.status != "ok" {
                *refusals.entry(&result.status).or_default() += 1;
            }
        }
        println!("\n== {suite}");
        println!(
            "{:<16} {:>7} {:>8} {:>9} {:>7} {:>6} {:>11} {:>8} {:>8} {:>5} {:>7}",
            "",
            "schemas",
            "compiled",
            "instances",
            "right",
            "(any)",
            "unsupported",
            "rej-valid",
            "acc-inv",
            "panic",
            "pass"
        );
        let rows = groups.iter().map(|(g, c)| (*g, c));
        let rows: Vec<(&str, &Counts)> = if groups.len() > 1 {
            rows.chain([("total", &total)]).collect()
        } else {
            rows.collect()
        };
        for (name, counts) in rows {
            let right = counts.get(Category::Right) + counts.get(Category::RightAnyOrder);
            let instances = counts.instances();
            println!(
                "{:<16} {:>7} {:>8} {:>9} {:>7} {:>6} {:>11} {:>8} {:>8} {:>5} {:>6.1}%",
                name,
                counts.schemas,
                counts.compiled,
                instances,
                right,
                counts.get(Category::RightAnyOrder),
                counts.get(Category::Unsupported),
                counts.get(Category::RejectedValid),
                counts.get(Category::AcceptedInvalid),
                counts.get(Category::Panic),
                percent(right, instances)
            );
        }
        let skipped: Vec<String> = results
            .iter()
            .filter(|r| r.suite == suite)
            .flat_map(|r| {
                r.categories
                    .iter()
                    .zip(&r.instance_descriptions)
                    .filter(|(c, _)| **c == Category::Skipped)
                    .map(move |(_, d)| format!("{}/{d}", r.file))
            })
            .collect();
        if !skipped.is_empty() {
            println!(
                "{} unreadable instances not counted: {}",
                skipped.len(),
                skipped.join(", ")
            );
        }
        let mut refusals: Vec<(&str, usize)> = refusals.into_iter().collect();
        refusals.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let shown: Vec<String> = refusals
            .iter()
            .take(8)
            .map(|(status, n)| format!("{} ×{n}", status.trim_start_matches("unsupported:")))
            .collect();
        if !shown.is_empty() {
            println!("most refused (schemas): {}", shown.join(", "));
        }
    }
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// llguidance's recorded results (`shared/data/reference/llguidance`) beside ours: the test
/// suite's draft 2020-12 per instance, MaskBench's compile results per collection.
pub fn llguidance(shared: &Path, results: &[SchemaResult]) {
    let dir = shared.join("data/reference/llguidance");
    let read = |name: &str| -> Option<Value> {
        let text = std::fs::read_to_string(dir.join(name)).ok()?;
        serde_json::from_str(&text).ok()
    };
    let ran = |suite: &str| results.iter().any(|r| r.suite == suite);
    println!("\n== llguidance (shared/data/reference/llguidance) on the same data");
    if ran("jsts-draft2020-12") {
        match read("expected_json_schema_test_suite.json") {
            Some(expected) => test_suite(&expected, results),
            None => println!("no expected_json_schema_test_suite.json"),
        }
    }
    if ran("jsonschemabench") {
        match read("expected_maskbench.shared.json") {
            Some(expected) => maskbench(&expected, results),
            None => println!("no expected_maskbench.shared.json"),
        }
    }
}

fn test_suite(expected: &Value, results: &[SchemaResult]) {
    let Some(files) = expected.get("draft2020-12").and_then(Value::as_object) else {
        return;
    };
    let mut ours: HashMap<(&str, &str, &str), Category> = HashMap::new();
    for result in results.iter().filter(|r| r.suite == "jsts-draft2020-12") {
        let file = result.file.trim_end_matches(".json");
        for (category, description) in result.categories.iter().zip(&result.instance_descriptions) {
            ours.insert((file, &result.description, description), *category);
        }
    }
    let (mut total, mut pass, mut compiled, mut both, mut sieve_right) = (0, 0, 0, 0, 0);
    for (file, cases) in files {
        for (case, tests) in cases.as_object().into_iter().flatten() {
            for (test, category) in tests.as_object().into_iter().flatten() {
                let category = category.as_str().unwrap_or_default();
                total += 1;
                pass += usize::from(category == "pass");
                compiled += usize::from(matches!(
                    category,
                    "pass" | "false_negative" | "false_positive"
                ));
                if let Some(ours) = ours.get(&(file.as_str(), case.as_str(), test.as_str())) {
                    both += 1;
                    sieve_right += usize::from(ours.rank() == 2);
                }
            }
        }
    }
    println!(
        "JSON-Schema-Test-Suite draft2020-12: llguidance right on {pass}/{total} instances \
         ({:.1}%; schema compiled for {compiled}); sieve right on {sieve_right} of the {both} \
         of them it has ({:.1}%)",
        percent(pass, total),
        percent(sieve_right, both)
    );
}

fn maskbench(expected: &Value, results: &[SchemaResult]) {
    let Some(files) = expected.as_object() else {
        return;
    };
    // collection → (files, llguidance compiled, sieve compiled among them)
    let mut rows: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let ours: HashMap<String, bool> = results
        .iter()
        .filter(|r| r.suite == "jsonschemabench")
        .map(|r| {
            let key = match r.file.strip_prefix("BFCL/") {
                Some(name) => name.to_owned(),
                None => r.file.replacen('/', "---", 1),
            };
            (key, r.status == "ok")
        })
        .collect();
    for (name, outcome) in files {
        let collection = if name.starts_with("BFCL_") {
            "BFCL"
        } else {
            name.split("---").next().unwrap_or_default()
        };
        let row = rows.entry(collection.to_owned()).or_default();
        row.0 += 1;
        row.1 += usize::from(outcome.get("json_error").is_none());
        row.2 += usize::from(ours.get(name).copied().unwrap_or(false));
    }
    println!("JSONSchemaBench schemas compiled (llguidance's MaskBench record vs sieve):");
    let mut total = (0, 0, 0);
    for (collection, (n, llg, sieve)) in &rows {
        println!(
            "  {collection:<16} {n:>5} schemas: llguidance {llg:>5} ({:>5.1}%), sieve {sieve:>5} ({:>5.1}%)",
            percent(*llg, *n),
            percent(*sieve, *n)
        );
        total = (total.0 + n, total.1 + llg, total.2 + sieve);
    }
    println!(
        "  {:<16} {:>5} schemas: llguidance {:>5} ({:>5.1}%), sieve {:>5} ({:>5.1}%)",
        "total",
        total.0,
        total.1,
        percent(total.1, total.0),
        total.2,
        percent(total.2, total.0)
    );
}

/// The five schemas that took longest.
pub fn slowest(results: &[SchemaResult]) {
    let mut by_time: Vec<&SchemaResult> = results.iter().collect();
    by_time.sort_by_key(|r| std::cmp::Reverse(r.time));
    let shown: Vec<String> = by_time
        .iter()
        .take(5)
        .map(|r| {
            format!(
                "{} {} #{} {:.2} s",
                r.suite,
                r.file,
                r.index,
                r.time.as_secs_f64()
            )
        })
        .collect();
    println!("\nslowest: {}", shown.join(", "));
}
