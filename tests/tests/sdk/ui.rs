//! The compile-fail suite: one file per author mistake under `ui/<area>/`, each with the
//! `.stderr` it must produce. `TRYBUILD=overwrite` rewrites the `.stderr` files (refused
//! under CI): read the diff.
//!
//! Only compile-fail cases here: trybuild then checks them all in one `cargo check
//! --keep-going`, where a single pass case would make it build (codegen included) every
//! case one after another. The cases that must compile are test targets of their own
//! (`ui-pass/`, in Cargo.toml), built with the workspace's other tests.

#[test]
fn author_mistakes_fail_to_compile_with_a_message_that_says_the_fix() {
    // trybuild reads `TRYBUILD` itself; this only refuses it under CI.
    test_support::overwrite_requested("TRYBUILD");
    trybuild::TestCases::new().compile_fail("ui/*/*.rs");
}

/// The cases whose expected output holds more than one error, each for a reason outside
/// this SDK's macros: (case, why).
const MORE_THAN_ONE_ERROR: &[(&str, &str)] = &[
    (
        "tool_args/schemars_0_8",
        "each impl the derive writes names schemars 1.x's `JsonSchema` as a supertrait, and rustc reports the missing one at each",
    ),
    (
        "tool_args/serde_with",
        "schemars' own derive reads `with = \"upper\"` as a type, and says so beside our error",
    ),
];

/// What `author_mistakes_fail_to_compile_...` holds every case to, read from the
/// `.stderr` files it compares: one mistake, one error. A case that reports more either
/// cascades (fix the macro) or makes two mistakes (split it), unless it is listed above.
#[test]
fn each_author_mistake_gives_exactly_one_error() {
    let mut cases = Vec::new();
    let mut cascades = Vec::new();
    for area in std::fs::read_dir("ui").unwrap() {
        for file in std::fs::read_dir(area.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            if path
                .extension()
                .is_none_or(|extension| extension != "stderr")
            {
                continue;
            }
            let errors = std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .filter(|line| line.starts_with("error:") || line.starts_with("error["))
                .count();
            let case = path.strip_prefix("ui").unwrap().with_extension("");
            let case = case.to_str().unwrap().to_owned();
            let allowed = MORE_THAN_ONE_ERROR.iter().any(|(name, _)| *name == case);
            if (errors == 1) == allowed {
                cascades.push(format!("{case}: {errors} errors"));
            }
            cases.push(case);
        }
    }
    assert!(
        cases.len() > 100,
        "the compile-fail cases under ui/ are missing"
    );
    for (listed, _) in MORE_THAN_ONE_ERROR {
        assert!(
            cases.iter().any(|case| case == listed),
            "{listed} is listed as giving more than one error, and is no case"
        );
    }
    assert!(
        cascades.is_empty(),
        "cases with other than one error (or listed as more and now one): {cascades:#?}"
    );
}
